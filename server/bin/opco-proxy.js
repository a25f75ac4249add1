#!/usr/bin/env node
// The installed command. It exists before the first build (npm links bins at install time)
// and starts the compiled CLI.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/src/cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('opco-proxy: not built yet; run `npm run build` (or `npm start`) at the repository root first');
  process.exit(1);
}
await import(cli.href);
