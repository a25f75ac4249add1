// The config layers of docs/configuration.md through the real CLI: `config check` (every problem
// with its path, overrides checked like the file) and defaults < file < environment < flags
// taking effect in a running process, up to the store and queue URLs on the real backends.
import t from 'tap';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  TEST_MASTER_KEY,
  freePort,
  realBackends,
  realBackendsSkip,
  runCli as run,
  stopCli as stop,
  writeConfig,
} from '../src/index.js';

/** Runs the CLI to its end: exit code and everything it printed. */
async function finish(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string }> {
  const proc = run(args, env);
  const [code] = await once(proc.child, 'close');
  return { code: code as number, out: proc.output() };
}

t.test(
  'config check: the example of deploy/ is valid; every problem of a bad file is listed with its path',
  async (t) => {
    const example = fileURLToPath(new URL('../../../deploy/config.json', import.meta.url));
    const good = await finish(['config', 'check', example], { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY });
    t.equal(good.code, 0, good.out);
    t.match(good.out, /valid\n.*listen 0\.0\.0\.0:8080[\s\S]*store mongodb[\s\S]*queue rabbitmq/);
    t.notMatch(good.out, /OPCO_PROXY_MASTER_KEY is not set/);

    const dir = mkdtempSync(join(tmpdir(), 'opco-check-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ port: 'eighty', colour: 'blue', jobs: { leaseMs: 1 } }));
    const schema = await finish(['config', 'check', bad]);
    t.equal(schema.code, 1);
    t.match(schema.out, /3 problems/);
    for (const line of [
      / {2}port: Expected integer/,
      / {2}colour: Unrecognized field/,
      / {2}jobs\.leaseMs: Must be greater than or equal to 100/,
    ])
      t.match(schema.out, line);

    const rules = join(dir, 'rules.json');
    const opco = {
      adapter: 'common-api',
      baseUrl: 'https://upstream.example',
      tokenUrl: 'https://upstream.example/token',
      clientId: 'c',
    };
    writeFileSync(
      rules,
      JSON.stringify({
        opcos: {
          health: { ...opco, clientSecretEnv: 'S' },
          acme: opco,
          other: { ...opco, adapter: 'no-such-adapter', clientSecretEnv: 'S' },
        },
      }),
    );
    const semantic = await finish(['config', 'check', rules]);
    t.equal(semantic.code, 1);
    t.match(semantic.out, /opcos\.health: "health" is reserved/);
    t.match(semantic.out, /opcos\.acme\.clientSecretEnv: required by the oauth-client-credentials authentication/);
    t.match(
      semantic.out,
      /opcos\.other\.adapter: adapter package "@opco-proxy\/adapter-no-such-adapter" is not installed/,
    );

    const fromEnv = await finish(['config', 'check', example], { PORT: 'http', OPCO_PROXY__jobs__prefetch: '0' });
    t.equal(fromEnv.code, 1, 'overrides are checked like the file');
    t.match(fromEnv.out, /port: Expected integer \(from PORT\)/);
    t.match(fromEnv.out, /jobs\.prefetch: .* \(from OPCO_PROXY__jobs__prefetch\)/);
    t.equal((await finish(['config', 'check', join(dir, 'missing.json')])).code, 1);
  },
);

t.test('PORT, HOST and LOG_LEVEL from the environment win over the file; flags win over both', async (t) => {
  const file = writeConfig({ port: 1, host: '0.0.0.0', logLevel: 'debug' });
  const port = await freePort();
  const quiet = run(['api', '--config', file], {
    OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => stop(quiet.child));
  const health = await eventuallyFetch(`http://127.0.0.1:${port}/health`);
  t.equal(health.status, 200, "listening on PORT, not the file's port");
  t.equal(await stop(quiet.child), 0);
  t.notMatch(quiet.output(), /"level":(20|30)/, 'LOG_LEVEL=warn: no debug or info lines');

  const flagged = run(['api', '--config', file, '--port', '0', '--log-level', 'info'], {
    OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => stop(flagged.child));
  const url = await flagged.url;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+$/, 'HOST from the environment');
  t.not(url, `http://127.0.0.1:${port}`, '--port wins over PORT');
  t.match(flagged.output(), /"level":30/, '--log-level wins over LOG_LEVEL');
  t.equal(await stop(flagged.child), 0);
});

t.test(
  'OPCO_PROXY_STORE_URL and OPCO_PROXY_QUEUE_URL switch a file without backends to MongoDB and RabbitMQ',
  { skip: realBackendsSkip() },
  async (t) => {
    const { store, queue } = realBackends('cli_env');
    const file = writeConfig({ host: '127.0.0.1', port: 0, mode: 'development', store: { type: 'embedded' } });
    const env = {
      OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY,
      OPCO_PROXY_STORE_URL: process.env.MONGODB_URL!,
      OPCO_PROXY_QUEUE_URL: process.env.RABBITMQ_URL!,
      OPCO_PROXY__store__database: (store as unknown as { database: string }).database,
      OPCO_PROXY__queue__prefix: (queue as unknown as { prefix: string }).prefix,
    };
    const first = run(['serve', '--config', file], env);
    t.teardown(() => stop(first.child));
    const url = await first.url;
    t.same(await (await fetch(`${url}/ready`)).json(), { status: 'ready', store: 'mongodb', queue: 'rabbitmq' });
    const headers = { 'X-API-KEY': 'cli-env-key-0001', 'content-type': 'application/json' };
    const created = await fetch(`${url}/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ callbackUrl: 'http://127.0.0.1:9/hook', events: ['job.completed'] }),
    });
    t.equal(created.status, 201, 'created');
    const { id } = (await created.json()) as { id: string };
    t.equal(await stop(first.child), 0);

    const second = run(['serve', '--config', file], env);
    t.teardown(() => stop(second.child));
    const listed = (await (await fetch(`${await second.url}/webhooks`, { headers })).json()) as Array<{ id: string }>;
    t.same(
      listed.map((webhook) => webhook.id),
      [id],
      'the webhook outlived the process: it is in MongoDB, not the embedded store',
    );
    t.equal(await stop(second.child), 0);
  },
);

async function eventuallyFetch(url: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url);
    } catch (err) {
      if (attempt >= 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
