// The CLI (D1, D2, D4): demo mode with nothing configured, a config file, role commands, one
// clear message for a bad config (help and version: cli-help.test.ts; the config layers and
// `config check`: cli-config.test.ts).
import t from 'tap';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { LEGACY_CLI, TEST_MASTER_KEY, runCli as run, stopCli as stop } from '../src/index.js';

t.test('demo mode: no config, the sandbox answers the curl of the README', async (t) => {
  const demo = run(['serve'], { PORT: '0' });
  t.teardown(() => stop(demo.child));
  const url = (await demo.url).replace('0.0.0.0', '127.0.0.1');
  const reply = await fetch(`${url}/sandbox/dossiers/etats`, { headers: { 'X-API-KEY': 'demo-key-123' } });
  t.equal(reply.status, 200);
  const body = (await reply.json()) as { status: string; EtatDossierResult: unknown[] };
  t.equal(body.status, 'success');
  t.ok(body.EtatDossierResult.length > 0);
  t.equal(await stop(demo.child), 0, 'clean exit on SIGTERM');
});

t.test('demo mode listens on 127.0.0.1 and says it is development mode; HOST overrides', async (t) => {
  const demo = run(['serve'], { PORT: '0', HOST: '' });
  t.teardown(() => stop(demo.child));
  await demo.url;
  await demo.printed(/demo mode \(development/);
  t.match(demo.output(), /"url":"http:\/\/127\.0\.0\.1:\d+"/, 'bound to the loopback address');
  t.match(demo.output(), /any API key, loopback webhook targets allowed.*on 127\.0\.0\.1/);
  t.equal(await stop(demo.child), 0);
  const open = run(['serve'], { PORT: '0', HOST: '0.0.0.0' });
  t.teardown(() => stop(open.child));
  await open.url;
  await open.printed(/demo mode/);
  t.match(open.output(), /on 0\.0\.0\.0/, 'HOST chosen by the operator');
  t.equal(await stop(open.child), 0);
});

t.test(
  '`demo` runs demo mode whatever OPCO_PROXY_CONFIG names; a role without its config file says how to go on',
  async (t) => {
    const missing = join(mkdtempSync(join(tmpdir(), 'opco-cli-')), 'config.json');
    const demo = run(['demo', '--port', '0'], { OPCO_PROXY_CONFIG: missing });
    t.teardown(() => stop(demo.child));
    const reply = await fetch(`${await demo.url}/sandbox/dossiers/etats`, { headers: { 'X-API-KEY': 'demo-key-123' } });
    t.equal(reply.status, 200, 'the demo sandbox answers; the config file was not read');
    t.equal(await stop(demo.child), 0);

    const plain = run([], { OPCO_PROXY_CONFIG: missing });
    const [code] = await once(plain.child, 'close');
    t.equal(code, 1, "the image's default command without a mounted config: exit 1");
    t.match(
      plain.output(),
      `no config file at ${missing} (OPCO_PROXY_CONFIG)`,
      'names the file and where its path came from',
    );
    t.match(
      plain.output(),
      /mount it there .*or try demo mode first: opco-proxy demo \(docker run -p 8080:8080 IMAGE demo\)/,
      'and both ways on',
    );
    t.notMatch(plain.output(), /at .*\.js:\d+/, 'no stack trace');
  },
);

t.test('serve --config FILE and OPCO_PROXY_CONFIG run from a file', async (t) => {
  const sandbox = await startSandbox();
  t.teardown(() => sandbox.close());
  const dir = mkdtempSync(join(tmpdir(), 'opco-cli-'));
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      host: '127.0.0.1',
      port: 0,
      opcos: {
        acme: {
          adapter: 'common-api',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'cli',
          clientSecretEnv: 'ACME_SECRET',
        },
      },
    }),
  );
  const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, ACME_SECRET: 's3cret' };
  for (const args of [['serve', '--config', file], ['api']]) {
    const proc = run(args, args.length === 1 ? { ...env, OPCO_PROXY_CONFIG: file } : env);
    const url = await proc.url;
    const reply = await fetch(`${url}/acme/dossiers/etats?numeroPage=1`, {
      headers: { 'X-API-KEY': 'cli-test-key-1' },
    });
    t.equal(reply.status, 200, args.join(' '));
    const unsupported = await fetch(`${url}/acme/cfakeyinfo?siren=123456789&XAPIKEY=x`, {
      headers: { 'X-API-KEY': 'cli-test-key-1' },
    });
    t.equal(unsupported.status, 501, 'common-api profile loaded by short name');
    t.equal(await stop(proc.child), 0);
  }
});

t.test(
  'node core/dist/src/cli.js, the path of earlier versions, still runs a role from OPCO_PROXY_CONFIG',
  async (t) => {
    const sandbox = await startSandbox();
    t.teardown(() => sandbox.close());
    const file = join(mkdtempSync(join(tmpdir(), 'opco-cli-')), 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        host: '127.0.0.1',
        port: 0,
        opcos: {
          acme: {
            adapter: 'common-api',
            baseUrl: sandbox.url,
            tokenUrl: sandbox.tokenUrl,
            clientId: 'cli',
            clientSecretEnv: 'ACME_SECRET',
          },
        },
      }),
    );
    const proc = run(
      ['serve'],
      { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, ACME_SECRET: 's3cret', OPCO_PROXY_CONFIG: file },
      LEGACY_CLI,
    );
    t.teardown(() => stop(proc.child));
    const reply = await fetch(`${await proc.url}/acme/dossiers/etats?numeroPage=1`, {
      headers: { 'X-API-KEY': 'cli-test-key-1' },
    });
    t.equal(reply.status, 200, 'served through the forwarding file');
    t.equal(await stop(proc.child), 0, 'and stopped cleanly on SIGTERM');
  },
);

t.test('a bad config stops start-up with one message naming the key', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'opco-cli-'));
  const cases: Array<[unknown, Record<string, string>, RegExp]> = [
    [{ port: 'eighty' }, { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY }, /port/],
    [{ colour: 'blue' }, { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY }, /colour/],
    [
      {
        opcos: {
          x: { adapter: 'common-api', baseUrl: 'http://127.0.0.1:1', tokenUrl: 'http://127.0.0.1:1/t', clientId: 'c' },
        },
      },
      { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY },
      /opcos\.x.*clientSecretEnv/,
    ],
    [{}, {}, /OPCO_PROXY_MASTER_KEY/],
    [
      {
        opcos: {
          x: {
            adapter: 'no-such-adapter',
            baseUrl: 'http://127.0.0.1:1',
            tokenUrl: 'http://127.0.0.1:1/t',
            clientId: 'c',
            clientSecretEnv: 'S',
          },
        },
      },
      { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, S: 's' },
      /opcos\.x\.adapter/,
    ],
  ];
  for (const [index, [config, env, pattern]] of cases.entries()) {
    const file = join(dir, `bad-${index}.json`);
    writeFileSync(file, JSON.stringify(config));
    const proc = run(['serve', '--config', file], { OPCO_PROXY_MASTER_KEY: '', ...env });
    // 'close', not 'exit': the error message may still be in the pipe when the process exits.
    const [code] = await once(proc.child, 'close');
    t.equal(code, 1, `exit 1 for ${JSON.stringify(config)}`);
    t.match(proc.output(), pattern);
    t.notMatch(proc.output(), /at .*\.js:\d+/, 'no stack trace');
  }
});

t.test('worker role starts without HTTP and stops on SIGTERM', async (t) => {
  const proc = run(['worker']);
  t.teardown(() => stop(proc.child, 'SIGKILL'));
  await proc.printed(/worker started/);
  t.equal(proc.child.exitCode, null, 'still running');
  t.notMatch(proc.output(), /listening on/, 'no HTTP server');
  t.equal(await stop(proc.child), 0);
});
