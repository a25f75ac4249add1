/**
 * `opco-proxy-adapter new NAME [--dir DIR]`: a new adapter package. Without --dir it goes to
 * adapters/<name> when run at the root of a clone of opco-proxy (a workspace, so `npm install`
 * links it to core and the kit), else to ./<name>.
 */
import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { createAdapterPackage, starterNames } from './starter.js';

const USAGE = 'usage: opco-proxy-adapter new NAME [--dir DIR]   (NAME: an npm package name, e.g. @acme/opco-proxy-adapter-acme or opco-acme)';

function main(): void {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.log(USAGE);
  const [command, name] = positionals;
  if (command !== 'new' || !name || positionals.length > 2) throw new Error(USAGE);
  const { id } = starterNames(name);
  const inClone = existsSync('adapters') && statSync('adapters').isDirectory();
  const dir = values.dir ?? (inClone ? join('adapters', id) : id);
  const files = createAdapterPackage(name, dir);
  const shown = relative(process.cwd(), dir) || '.';
  console.log(`wrote ${files.length} files to ${shown}:\n${files.map((file) => `  ${file}`).join('\n')}\n`);
  console.log(`next:\n  npm install${inClone ? '                 (links the new workspace package)' : ''}\n  cd ${shown} && npm test     (the conformance suite passes as written)\n  then follow docs/adapters.md: describe your upstream in src/index.ts, record its answers in fixtures/`);
}

try {
  main();
} catch (err) {
  console.error(`opco-proxy-adapter: ${(err as Error).message}`);
  process.exit(1);
}
