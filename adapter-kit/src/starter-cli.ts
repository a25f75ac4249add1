/**
 * The starter's command line, shared by `opco-proxy-adapter new NAME [--dir DIR]` (a project that
 * has the kit) and `npm create @opco-proxy/adapter NAME [--dir DIR]` (an empty directory; the
 * `@opco-proxy/create-adapter` package). `opco-proxy new-adapter NAME` calls the same starter.
 */
import { parseArgs } from 'node:util';
import { writeStarter } from './starter.js';

const NAME_HELP = 'NAME: an npm package name, e.g. @acme/opco-proxy-adapter-acme or opco-acme';

/**
 * Runs `command NAME [--dir DIR]` (`command` is `new` for the kit's bin, absent for `npm create`)
 * and returns the exit code; the usage goes to stderr on a bad call.
 */
export function runStarterCli(program: string, args: string[], command?: string): number {
  const usage = `usage: ${program}${command ? ` ${command}` : ''} NAME [--dir DIR]   (${NAME_HELP})`;
  try {
    const { positionals, values } = parseArgs({
      args,
      allowPositionals: true,
      options: { dir: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
    if (values.help) {
      console.log(usage);
      return 0;
    }
    const words = command ? positionals : [undefined, ...positionals];
    const [given, name] = words;
    if (given !== command || !name || words.length > 2) throw new Error(usage);
    console.log(writeStarter(name, { dir: values.dir }).message);
    return 0;
  } catch (err) {
    console.error(`${program}: ${(err as Error).message}`);
    return 1;
  }
}
