// An adapter's profile as the kernel loads it: a plain JavaScript adapter without sync and
// polling starts and answers with the documented defaults; a block of the wrong type, a profile
// format or a plugin API this core does not support is refused at start, naming the package and
// the key (or what it targets and what is supported).
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import {
  ConfigError,
  PROFILE_DEFAULTS,
  createEmbeddedQueue,
  createEmbeddedStore,
  createKernel,
  isKernelError,
  loadPlugins,
  resolveConfig,
  type KernelErrorCode,
} from '../src/application.js';
import { answerJson, startRecordingServer } from '../src/testing/recording-server.js';

const KEY = 'tenant-key-0001';
const PLAIN_ADAPTER = fileURLToPath(new URL('../../test/fixtures/plain-adapter.mjs', import.meta.url));
const PAGE = { status: 'ok', EtatDossierResult: [] };

/** Starts a kernel serving opcoId `up` through the adapter at `adapter`; its teardown is registered on `t`. */
async function start(t: Test, adapter: string, baseUrl = 'http://127.0.0.1:9') {
  const store = await createEmbeddedStore({});
  const queue = createEmbeddedQueue();
  t.teardown(async () => {
    await queue.close();
    await store.close();
  });
  const config = resolveConfig(
    {
      mode: 'development',
      host: '127.0.0.1',
      logLevel: 'silent',
      plugins: [],
      opcos: { up: { adapter, baseUrl, apiKeyEnv: 'UP_KEY' } },
    },
    { OPCO_PROXY_MASTER_KEY: '0f'.repeat(32), OPCO_PROXY_ADMIN_KEY: 'a'.repeat(40), UP_KEY: 'gateway' },
  );
  const kernel = await createKernel(config, { store, queue });
  t.teardown(() => kernel.close({ graceMs: 500 }));
  return kernel;
}

/** Writes an adapter module whose profile is `profile` (JavaScript source) and returns its path. */
function adapterFile(t: Test, profile: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'opco-adapter-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'adapter.mjs');
  writeFileSync(file, `export default { profile: ${profile} };\n`);
  return file;
}

const PROFILE =
  "{ id: 'js', versions: ['v1'], rateLimit: { limit: 10, windowMs: 60000 }, routes: { 'GET /status': { upstream: '/status' } }";

async function refusal(t: Test, adapter: string, code: KernelErrorCode): Promise<string> {
  try {
    await start(t, adapter);
  } catch (err) {
    t.ok(err instanceof ConfigError && isKernelError(err, code), `a ConfigError ${code}: ${String(err)}`);
    return (err as Error).message;
  }
  t.fail('the kernel started');
  return '';
}

t.test('a plain JavaScript adapter without sync and polling starts and answers', async (t) => {
  const upstream = await startRecordingServer((_req, res) => answerJson(res, 200, PAGE));
  t.teardown(() => upstream.close());
  const kernel = await start(t, PLAIN_ADAPTER, upstream.url);
  const opco = kernel.opcos.get('up');
  t.same(opco.profile.sync, PROFILE_DEFAULTS.sync, 'sync: the default batch');
  t.same(opco.profile.polling, PROFILE_DEFAULTS.polling, 'polling: the default interval');
  t.equal(opco.pollingIntervalMs, 300_000);
  t.equal(opco.profile.formatVersion, 1, 'no formatVersion is format 1');
  const url = await kernel.listen(0, '127.0.0.1');
  const response = await request(`${url}/up/dossiers/etats`, { headers: { 'x-api-key': KEY } });
  t.equal(response.statusCode, 200);
  t.same(await response.body.json(), PAGE);
  t.equal(upstream.received[0]?.headers['x-gateway-key'], 'gateway', "through the adapter's own authentication");
});

t.test('a block of the wrong type is refused at start, naming the opcoId, the package and the key', async (t) => {
  const polling = await refusal(t, adapterFile(t, `${PROFILE}, polling: 5 }`), 'OPCO_ERR_PROFILE_INVALID');
  t.match(
    polling,
    /^invalid configuration: opcos\.up\.adapter: the profile of adapter ".*adapter\.mjs": polling: 5: an object \{intervalMs\}/,
  );
  const routes = await refusal(
    t,
    adapterFile(t, "{ id: 'js', versions: ['v1'], rateLimit: { limit: 10, windowMs: 60000 }, routes: [] }"),
    'OPCO_ERR_PROFILE_INVALID',
  );
  t.match(
    routes,
    /opcos\.up\.adapter: the profile of adapter ".*adapter\.mjs": routes: an array: required, an object of route key/,
  );
  const several = await refusal(
    t,
    adapterFile(t, `${PROFILE}, sync: { batchSize: '50' }, errors: {} }`),
    'OPCO_ERR_PROFILE_INVALID',
  );
  t.match(
    several,
    /sync\.batchSize: "50": dossiers per liste call, a whole number.*; errors: \{\}: a list of rules/,
    'every problem, each by its key',
  );
  const missing = await refusal(
    t,
    adapterFile(t, "{ id: 'js', versions: ['v1'], routes: {} }"),
    'OPCO_ERR_PROFILE_INVALID',
  );
  t.match(missing, /rateLimit: undefined: required, \{limit, windowMs\}/);
});

t.test('an adapter built for a profile format this service does not read is refused', async (t) => {
  const message = await refusal(
    t,
    adapterFile(t, `${PROFILE}, formatVersion: 2 }`),
    'OPCO_ERR_PROFILE_FORMAT_UNSUPPORTED',
  );
  t.match(
    message,
    /^invalid configuration: opcos\.up\.adapter: adapter ".*adapter\.mjs" targets profile format 2; this service supports profile format 1$/,
  );
  t.match(
    await refusal(t, adapterFile(t, `${PROFILE}, formatVersion: 'one' }`), 'OPCO_ERR_PROFILE_INVALID'),
    /formatVersion: "one": a whole number/,
  );
});

t.test('a plugin written for a plugin API this service does not run is refused', async (t) => {
  const future = { default: { name: 'future', apiVersion: 2, register() {} } };
  const bundled = {
    plugins: {
      '@opco-proxy/plugin-future': async () => future,
      '@opco-proxy/plugin-now': async () => ({ default: { name: 'now', apiVersion: 1, register() {} } }),
    },
  };
  await t.rejects(loadPlugins(['now', 'future'], [], bundled), {
    code: 'OPCO_ERR_PLUGIN_API_UNSUPPORTED',
    message:
      'invalid configuration: plugins[1]: plugin "@opco-proxy/plugin-future" targets plugin API 2; this service supports plugin API 1',
  });
  t.same(
    (await loadPlugins(['now'], [], bundled)).map((plugin) => plugin.name),
    ['now'],
    'the version it runs',
  );
});
