// Issue "consolidation": routes mounted by operation from one manifest (so /doc lists only what
// is served), exactly one admission provider, hooks and seams fixed once the kernel is ready,
// and plugins that receive only what they need.
import t from 'tap';
import type { PluginApi } from '@opco-proxy/core';
import { operationIds } from '@opco-proxy/schemas';
import { startService } from '../src/index.js';

const paths = (doc: any) =>
  Object.entries(doc.paths as Record<string, object>).flatMap(([path, item]) =>
    Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
  );

t.test('/doc documents the operations this instance serves, and only those', async (t) => {
  const cacheOnly = await startService({ config: { plugins: ['cache'] } });
  t.teardown(() => cacheOnly.close());
  const documented = paths((await cacheOnly.get('/doc', { key: null })).body);
  t.ok(documented.includes('GET /{opcoId}/dossiers/etats'), 'reads are there');
  for (const absent of [
    'POST /webhooks',
    'POST /sync/dossiers',
    'POST /{opcoId}/dossiers',
    'GET /{opcoId}/jobs/{jobId}',
    'GET /pollers',
  ]) {
    t.notOk(documented.includes(absent), `${absent} is not served, so not documented`);
    const [method, path] = absent.split(' ');
    const reply = await cacheOnly.request(
      method,
      path.replace('{opcoId}', 'sandbox').replace('{jobId}', '0e3c1b2a-0000-4000-8000-000000000000'),
      { body: method === 'POST' ? {} : undefined },
    );
    t.ok([404, 405].includes(reply.status), `${absent} answers ${reply.status}`);
  }
  const full = await startService({});
  t.teardown(() => full.close());
  t.equal(
    paths((await full.get('/doc', { key: null })).body).length,
    operationIds.length,
    'every operation when every plugin (but the hub, which serves none) is on',
  );
});

const provider = (name: string) => ({
  name: `${name}-plugin`,
  register: (api: PluginApi) =>
    api.provide('admission', { name, admit: async () => ({ headers: {}, release: () => undefined }) }),
});

t.test('a second admission provider is a start-up error naming both', async (t) => {
  await t.rejects(startService({ plugins: [provider('first-budget'), provider('second-budget')] }), {
    message:
      /admission has two providers: "first-budget" from plugin first-budget-plugin and "second-budget" from plugin second-budget-plugin/,
  });
  const one = await startService({ plugins: [provider('only-budget')] });
  t.teardown(() => one.close());
  t.equal(
    (await one.get('/sandbox/dossiers/etats?numeroPage=1')).status,
    200,
    'one provider replaces the store budget',
  );
});

t.test('hooks, seams and routes are fixed once the kernel is ready', async (t) => {
  let kept: PluginApi | undefined;
  const service = await startService({ plugins: [{ name: 'late', register: (api: PluginApi) => void (kept = api) }] });
  t.teardown(() => service.close());
  t.throws(() => kept!.addHook('event', () => undefined), /added after the kernel was ready/);
  t.throws(
    () => kept!.provide('admission', { name: 'late', admit: async () => ({ headers: {}, release: () => undefined }) }),
    /fixed once the kernel is ready/,
  );
  t.throws(
    () => kept!.route('getHealth', () => ({ status: 200, body: { status: 'ok' } })),
    /fixed once the kernel is ready/,
  );
});

t.test('an operation mounted twice or unknown is refused at start-up', async (t) => {
  const twice = {
    name: 'twice',
    register: (api: PluginApi) => api.route('getHealth', () => ({ status: 200, body: { status: 'ok' } })),
  };
  await t.rejects(
    startService({ plugins: [twice] }),
    /operation getHealth is mounted twice: by kernel and by plugin twice/,
  );
  const unknown = {
    name: 'unknown',
    register: (api: PluginApi) => api.route('getEverything' as never, (() => undefined) as never),
  };
  await t.rejects(startService({ plugins: [unknown] }), /unknown operation "getEverything"/);
});

t.test('a plugin receives its own config section, a sealer and no secret', async (t) => {
  let seen: PluginApi | undefined;
  const service = await startService({
    config: { jobs: { leaseMs: 12_345 } },
    plugins: [{ name: 'jobs-peer', register: (api: PluginApi) => void (seen = api) }],
  });
  t.teardown(() => service.close());
  const api = seen as unknown as Record<string, unknown>;
  t.same(api.config, {}, 'a plugin without a section gets an empty one');
  for (const key of ['masterKey', 'clientSecrets', 'opcosConfig', 'hooks', 'router']) t.notOk(key in api, `no ${key}`);
  const opco = seen!.opcos.get('sandbox') as unknown as Record<string, unknown>;
  for (const key of ['clientSecret', 'clientId', 'tokenUrl'])
    t.notOk(key in opco, `the opco directory holds no ${key}`);
  const sealed = seen!.sealer.seal('a secret', 'record-1');
  t.equal(seen!.sealer.unseal(sealed, 'record-1').toString(), 'a secret');
  t.throws(() => seen!.sealer.unseal(sealed, 'record-2'), 'bound to its record');
});
