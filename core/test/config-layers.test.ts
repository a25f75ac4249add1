// Config layers (D2, D3): defaults < file < environment < command-line flags, and a bad value
// reported with the key it is at and, when the environment or a flag set it, with what set it.
import t, { type Test } from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ConfigError,
  DEFAULTS,
  checkConfig as checkKernelConfig,
  layerConfig,
  readConfigFile,
  resolveConfig as resolveKernelConfig,
  type ConfigParts,
  type ConfigFlags,
} from '../src/application.js';

/** An application's parts, as a plugin and a driver would give them (the kernel knows neither). */
const PARTS: ConfigParts = {
  sections: [
    {
      key: 'jobs',
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          leaseMs: { type: 'integer', minimum: 100, default: 30_000 },
          prefetch: { type: 'integer', minimum: 1, default: 4 },
        },
      },
    },
    {
      key: 'hub',
      schema: {
        type: 'object',
        additionalProperties: false,
        required: ['url'],
        properties: { url: { type: 'string' } },
      },
    },
  ],
  drivers: [
    {
      port: 'store',
      type: 'mongodb',
      schema: { type: 'object', required: ['url'], properties: { url: { type: 'string', pattern: '^mongodb://' } } },
    },
    {
      port: 'queue',
      type: 'rabbitmq',
      schema: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } },
    },
  ],
};
const JOBS_DEFAULTS = { prefetch: 4 };
const resolveConfig = (raw: unknown, env: NodeJS.ProcessEnv, options: { demo?: boolean; flags?: ConfigFlags } = {}) =>
  resolveKernelConfig(raw, env, { ...options, parts: PARTS });
const checkConfig = (raw: unknown, env: NodeJS.ProcessEnv = {}) => checkKernelConfig(raw, env, {}, PARTS);

const MASTER_KEY = { OPCO_PROXY_MASTER_KEY: '0f'.repeat(32) };

/** The message resolveConfig stops with, or a failure when it does not stop. */
function refusal(t: Test, run: () => unknown): string {
  try {
    run();
  } catch (err) {
    t.ok(err instanceof ConfigError, 'a ConfigError');
    return (err as Error).message;
  }
  t.fail('the configuration was accepted');
  return '';
}

t.test('each layer wins over the one below: defaults < file < env < flags', async (t) => {
  const file = { port: 9000, host: '10.0.0.1', jobs: { leaseMs: 5000 } };
  t.equal(resolveConfig({}, MASTER_KEY).port, DEFAULTS.port, 'default when nothing sets it');
  t.equal(resolveConfig(file, MASTER_KEY).port, 9000, 'the file over the default');
  const env = { ...MASTER_KEY, PORT: '9100', OPCO_PROXY__jobs__leaseMs: '7000' };
  const fromEnv = resolveConfig(file, env);
  t.equal(fromEnv.port, 9100, 'PORT over the file');
  const jobs = fromEnv.jobs as { leaseMs: number; prefetch: number };
  t.equal(jobs.leaseMs, 7000, 'a generic variable over the file, read as JSON');
  t.equal(jobs.prefetch, JOBS_DEFAULTS.prefetch, "keys beside it keep their section's defaults");
  t.equal(fromEnv.host, '10.0.0.1', 'keys no layer above sets keep the file value');
  const fromFlags = resolveConfig(file, env, { flags: { port: '9200', host: '127.0.0.2' } });
  t.equal(fromFlags.port, 9200, '--port over PORT');
  t.equal(fromFlags.host, '127.0.0.2', '--host over the file');
});

t.test('named variables win over the generic rule for the same key', async (t) => {
  const { raw, sources } = layerConfig({}, { OPCO_PROXY__port: '1111', PORT: '2222' });
  t.same(raw, { port: 2222 });
  t.equal(sources.get('port'), 'PORT');
});

t.test('empty variables count as unset; the file object is not changed', async (t) => {
  const file = { port: 9000 };
  const { raw, sources } = layerConfig(file, { PORT: '', OPCO_PROXY__host: '', LOG_LEVEL: 'debug' });
  t.same(raw, { port: 9000, logLevel: 'debug' });
  t.same([...sources.keys()], ['logLevel']);
  t.same(file, { port: 9000 }, 'the layers write to a copy');
});

t.test('generic values are JSON when they parse, strings otherwise; nested paths are made', async (t) => {
  const { raw } = layerConfig(
    {},
    {
      OPCO_PROXY__sync__backoffMs: '[10,20]',
      OPCO_PROXY__audit__reads: 'true',
      OPCO_PROXY__publisher__editeur: 'ACME editions',
    },
  );
  t.same(raw, { sync: { backoffMs: [10, 20] }, audit: { reads: true }, publisher: { editeur: 'ACME editions' } });
});

t.test('a store or queue URL switches an embedded backend to its server', async (t) => {
  const { raw } = layerConfig(
    { store: { type: 'embedded', path: '/data' }, queue: { type: 'embedded' } },
    {
      OPCO_PROXY_STORE_URL: 'mongodb://db/x',
      OPCO_PROXY_QUEUE_URL: 'amqp://mq',
    },
  );
  t.same(
    raw,
    { store: { type: 'mongodb', url: 'mongodb://db/x' }, queue: { type: 'rabbitmq', url: 'amqp://mq' } },
    'the embedded path is dropped',
  );
  const config = resolveConfig({}, { ...MASTER_KEY, OPCO_PROXY_STORE_URL: 'mongodb://db/x' });
  t.same(config.store, { type: 'mongodb', url: 'mongodb://db/x' });
});

t.test('with `keys`, variables for other top-level keys are ignored', async (t) => {
  const { raw, sources } = layerConfig(
    {},
    { PORT: '1', OPCO_PROXY__jobs__leaseMs: '5', OPCO_PROXY__hubOnly: '3' },
    { host: 'h' },
    ['port', 'hubOnly'],
  );
  t.same(raw, { port: 1, hubOnly: 3 });
  t.same([...sources.keys()].sort(), ['hubOnly', 'port']);
});

t.test('a variable that is no key path is refused by name', async (t) => {
  for (const name of [
    'OPCO_PROXY__jobs____leaseMs',
    'OPCO_PROXY____proto____polluted',
    'OPCO_PROXY__jobs__constructor',
  ]) {
    const message = refusal(t, () => layerConfig({}, { [name]: '1' }));
    t.match(message, name, `${name} is named`);
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was written to');
});

t.test('errors name the bad key, and the variable or flag that set it', async (t) => {
  t.match(
    refusal(t, () => resolveConfig({ port: 'eighty' }, MASTER_KEY)),
    /^invalid configuration: port\b/,
    'a bad file value names its key',
  );
  t.notMatch(
    refusal(t, () => resolveConfig({ port: 'eighty' }, MASTER_KEY)),
    /\(from /,
    'and no variable',
  );
  t.match(
    refusal(t, () => resolveConfig({}, { ...MASTER_KEY, PORT: 'eighty' })),
    /port.*\(from PORT\)/,
  );
  t.match(
    refusal(t, () => resolveConfig({}, { ...MASTER_KEY, OPCO_PROXY__jobs__leaseMs: '"soon"' })),
    /jobs\.leaseMs.*\(from OPCO_PROXY__jobs__leaseMs\)/,
  );
  t.match(
    refusal(t, () => resolveConfig({}, MASTER_KEY, { flags: { port: '-5' } })),
    /port.*\(from --port\)/,
  );
});

t.test('several problems are reported together, one per line', async (t) => {
  const { errors } = checkConfig(
    { port: 'x', host: 5, opcos: { health: { adapter: 'sandbox', baseUrl: 'http://u' } } },
    { LOG_LEVEL: 'loud' },
  );
  t.ok(errors.length >= 3, `three problems or more: ${errors.join(' | ')}`);
  t.ok(
    errors.some((e) => e.startsWith('port')),
    'port',
  );
  t.ok(
    errors.some((e) => e.startsWith('host')),
    'host',
  );
  t.ok(
    errors.some((e) => e.startsWith('logLevel') && e.endsWith('(from LOG_LEVEL)')),
    'logLevel, from LOG_LEVEL',
  );
  const message = refusal(t, () => resolveConfig({ port: 'x', host: 5 }, MASTER_KEY));
  t.match(message, /^invalid configuration \(\d+ problems\):\n {2}/);
});

t.test('rules past the schema name their key too', async (t) => {
  const { config, errors } = checkConfig({
    opcos: { health: { adapter: 'sandbox', baseUrl: 'http://u' } },
    plugins: ['hub'],
    trustedProxies: ['10.0.0.0/99'],
  });
  t.ok(config, 'the config is there once the schema holds');
  t.match(errors, [/^opcos\.health: /, /^hub: /, /^trustedProxies\.0: /]);
});

t.test('secrets come from the environment only, and are checked', async (t) => {
  t.match(
    refusal(t, () => resolveConfig({}, {})),
    /OPCO_PROXY_MASTER_KEY: required/,
  );
  t.match(
    refusal(t, () => resolveConfig({}, { OPCO_PROXY_MASTER_KEY: 'abc' })),
    /OPCO_PROXY_MASTER_KEY: must be 64 hex/,
  );
  t.match(
    refusal(t, () => resolveConfig({}, { ...MASTER_KEY, OPCO_PROXY_ADMIN_KEY: 'short' })),
    /OPCO_PROXY_ADMIN_KEY: must be at least 32/,
  );
  t.equal(resolveConfig({}, {}, { demo: true }).masterKey.length, 32, 'demo mode makes its own');
});

t.test('the file layer: a file that cannot be read or is not JSON is named in the message', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'config-layers-'));
  const good = join(dir, 'good.json');
  const broken = join(dir, 'broken.json');
  writeFileSync(good, JSON.stringify({ port: 9000 }));
  writeFileSync(broken, '{"port": 90');
  t.same(readConfigFile(good), { port: 9000 });
  t.match(
    refusal(t, () => readConfigFile(broken)),
    `config file ${broken} is not valid JSON`,
  );
  t.match(
    refusal(t, () => readConfigFile(join(dir, 'missing.json'))),
    `config file ${join(dir, 'missing.json')} cannot be read`,
  );
});
