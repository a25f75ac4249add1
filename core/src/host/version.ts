/** The service's version, from core's package.json: in `User-Agent` of webhooks and in `--version`. */
import { readFileSync } from 'node:fs';

export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
