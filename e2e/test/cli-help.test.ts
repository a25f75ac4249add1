// The CLI's own words: `--help` of every command, `help`, `--version`, an unknown command.
import t from 'tap';
import { once } from 'node:events';
import { SERVICE_VERSION } from '@opco-proxy/core';
import { runCli as run } from '../src/index.js';

/** Runs the CLI to its end: exit code and everything it printed. */
async function finish(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const proc = run(args, env);
  const [code] = await once(proc.child, 'close');
  return { code: code as number, out: proc.output() };
}

t.test('--help of every command, help, --version, an unknown command', async (t) => {
  const commands: Array<[string[], RegExp[]]> = [
    [
      [],
      [
        /serve/,
        /api/,
        /worker/,
        /hub/,
        /config/,
        /new-adapter/,
        /help \[command\]/,
        /OPCO_PROXY__<key>__<key>/,
        /defaults < config file < environment < command-line flags/,
      ],
    ],
    [
      ['serve'],
      [/--config <file>/, /env: OPCO_PROXY_CONFIG/, /--port <port>/, /--host <address>/, /--log-level <level>/],
    ],
    [['api'], [/--config <file>/, /--port <port>/]],
    [['worker'], [/--config <file>/, /--log-level <level>/]],
    [['hub'], [/hub config file/, /--port <port>/]],
    [['config'], [/check <file>/]],
    [
      ['config', 'check'],
      [/opco-proxy config check \[options\] <file>/, /every problem/],
    ],
    [['new-adapter'], [/opco-proxy new-adapter \[options\] <name>/, /--dir <dir>/]],
  ];
  // In parallel: each is a whole Node start-up.
  const helps = await Promise.all(commands.map(([command]) => finish([...command, '--help'])));
  for (const [index, [command, patterns]] of commands.entries()) {
    const { code, out } = helps[index];
    t.equal(code, 0, `${command.join(' ')} --help exits 0`);
    t.match(out, new RegExp(`Usage: opco-proxy ${command.join(' ')}`.trim()));
    for (const pattern of patterns) t.match(out, pattern, `${command.join(' ') || 'opco-proxy'} --help: ${pattern}`);
  }
  t.same(await finish(['help', 'serve']), await finish(['serve', '--help']), 'help serve is serve --help');
  t.match((await finish(['help'])).out, /Commands:[\s\S]*new-adapter/);
  for (const flag of ['--version', '-v']) t.same(await finish([flag]), { code: 0, out: `${SERVICE_VERSION}\n` }, flag);
  const unknown = await finish(['launch']);
  t.equal(unknown.code, 1);
  t.match(unknown.out, /unknown command 'launch'/);
  t.notMatch(unknown.out, /at .*\.js:\d+/, 'no stack trace');
});
