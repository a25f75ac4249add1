/**
 * `opco-proxy-adapter new NAME [--dir DIR]`: a new adapter package (the same starter as
 * `opco-proxy new-adapter NAME`, for a project that has the kit but not the service installed).
 */
import { parseArgs } from 'node:util';
import { writeStarter } from './starter.js';

const USAGE = 'usage: opco-proxy-adapter new NAME [--dir DIR]   (NAME: an npm package name, e.g. @acme/opco-proxy-adapter-acme or opco-acme)';

function main(): void {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return void console.log(USAGE);
  const [command, name] = positionals;
  if (command !== 'new' || !name || positionals.length > 2) throw new Error(USAGE);
  console.log(writeStarter(name, { dir: values.dir }).message);
}

try {
  main();
} catch (err) {
  console.error(`opco-proxy-adapter: ${(err as Error).message}`);
  process.exit(1);
}
