#!/usr/bin/env node
// The installed command (`npx opco-proxy-adapter new NAME`). It exists before the first build
// (npm links bins at install time) and starts the compiled starter.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/src/starter-cli.js', import.meta.url);
if (!existsSync(cli)) {
  console.error('opco-proxy-adapter: not built yet; run `npm run build` at the repository root first');
  process.exit(1);
}
const { runStarterCli } = await import(cli.href);
process.exitCode = runStarterCli('opco-proxy-adapter', process.argv.slice(2), 'new');
