// The `hub` plugin on a real kernel (D3 `plugins: [..., "hub"]`, core's admission seam): every
// upstream call of the kernel is admitted through the hub (its grant verifies at the upstream, a
// 401 retry carries a grant of its own), the kernel's window is reported, the instance metrics are
// on the kernel's registry; and a second admission provider next to the hub is a start-up error
// naming both, which leaves no connection to the hub behind.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedQueue, createEmbeddedStore, type AdmissionProvider, type Plugin } from '@opco-proxy/core';
import { createKernel, resolveConfig, type Kernel } from '@opco-proxy/core/application';
import { startSandbox, type Sandbox } from '@opco-proxy/adapter-sandbox';
import hubPlugin from '@opco-proxy/plugin-hub';
import { eventually, SECRET, startTestHub, type TestHub } from './fixtures/hub-harness.js';
import { CONFIG_SCHEMA as hubSchema } from '@opco-proxy/plugin-hub/config';

const MASTER_KEY = '0f'.repeat(32);
const CFA_KEY = 'cfa-key-of-the-plugin-test';

async function kernelWithHub(
  t: Test,
  hub: TestHub,
  sandbox: Sandbox,
  hubKey: string,
  extra: Plugin[] = [],
  plugins = ['hub'],
): Promise<Kernel> {
  const rateLimit = { limit: 3, windowMs: 60_000 };
  const config = resolveConfig(
    {
      mode: 'development',
      host: '127.0.0.1',
      logLevel: 'silent',
      plugins,
      hub: { url: hub.url.replace(/^http/, 'ws'), apiKeyEnv: 'PLUGIN_TEST_HUB_KEY', maxWaitMs: 300 },
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'c',
          clientSecretEnv: 'PLUGIN_TEST_SECRET',
          rateLimit,
        },
      },
    },
    { OPCO_PROXY_MASTER_KEY: MASTER_KEY, PLUGIN_TEST_SECRET: 's', PLUGIN_TEST_HUB_KEY: hubKey },
    { parts: { sections: [{ key: 'hub', schema: hubSchema }] } },
  );
  // Given, not opened by the kernel: a kernel that fails to start does not close them.
  const store = await createEmbeddedStore();
  const queue = createEmbeddedQueue();
  t.teardown(async () => {
    await queue.close();
    await store.close();
  });
  return createKernel(config, { store, queue, plugins: extra });
}

const rival = (name: string): Plugin => ({
  name,
  register(api) {
    const provider: AdmissionProvider = {
      name: `${name}-budget`,
      admit: async () => ({ headers: {}, release: () => undefined }),
    };
    api.provide('admission', provider);
  },
});

t.test('a kernel with the hub plugin admits every upstream call through the hub', async (t) => {
  const hub = await startTestHub({ opcos: { sandbox: { limit: 3, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const sandbox = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: SECRET });
  t.teardown(() => sandbox.close());
  const { key } = await hub.key('publisher', 'api-1');
  const kernel = await kernelWithHub(t, hub, sandbox, key);
  t.teardown(() => kernel.close({ graceMs: 1000 }));
  const url = await kernel.listen(0, '127.0.0.1');
  await eventually(
    async () => (await hub.admin('GET', '/admin/instances')).body.length === 1,
    'the kernel to connect once ready',
  );
  const get = (path: string) => fetch(url + path, { headers: { 'x-api-key': CFA_KEY } });

  t.equal((await get('/sandbox/dossiers/etats?numeroPage=1')).status, 200);
  sandbox.revokeTokens(); // the next call is answered 401, then made again with a fresh token
  t.equal((await get('/sandbox/dossiers/etats?numeroPage=2')).status, 200);
  const calls = sandbox.received.filter((r) => r.path === '/v2/dossiers/etats');
  t.equal(calls.length, 3, 'two calls, one of them made twice after a 401');
  for (const call of calls) {
    t.equal(call.hubToken?.valid, true, `grant verified by the upstream (${call.hubToken?.reason ?? 'ok'})`);
    t.match(call.hubToken?.claims, {
      opcoId: 'sandbox',
      method: 'GET',
      route: 'GET /dossiers/etats',
      iss: 'opco-proxy-hub',
    });
  }
  t.equal(
    new Set(calls.map((c) => c.hubToken?.claims?.jti)).size,
    3,
    'the retry after the 401 was admitted on its own, with its own grant',
  );

  const refused = await get('/sandbox/dossiers/etats?numeroPage=3');
  t.equal(refused.status, 429, 'the budget of 3 is spent: a client GET waits maxWaitMs, then 429');
  t.equal(((await refused.json()) as { code: string }).code, 'RATE_LIMITED');
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After');

  const [limits] = (await hub.admin('GET', '/admin/limits')).body.limits;
  t.match(limits, { fleetId: 'publisher', opcoId: 'sandbox', grantsInWindow: 3 });
  const [instance] = await eventually(async () => {
    const body = (await hub.admin('GET', '/admin/instances')).body;
    return body[0]?.metrics?.sandbox?.requests >= 2 && body;
  }, 'the kernel window to be reported');
  t.match(instance, { name: 'api-1', fleetId: 'publisher' });
  const metrics = await (await fetch(`${url}/metrics`)).text();
  t.match(metrics, /opco_proxy_hub_connection_state\{state="connected"\} 1/, 'connection state on the kernel registry');
  t.match(
    metrics,
    /opco_proxy_hub_grant_wait_seconds_count\{opco="sandbox",mode="hub"\} 3/,
    'grant waits on the kernel registry',
  );
});

t.test(
  "through the kernel: calls of a key the upstream has not accepted yet get the hub's unproven slice",
  async (t) => {
    const hub = await startTestHub({ opcos: { sandbox: { limit: 3, windowMs: 60_000 } } }); // a slice of one
    t.teardown(() => hub.close());
    const sandbox = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: SECRET });
    t.teardown(() => sandbox.close());
    const kernel = await kernelWithHub(t, hub, sandbox, (await hub.key('publisher', 'api-1')).key);
    t.teardown(() => kernel.close({ graceMs: 1000 }));
    const url = await kernel.listen(0, '127.0.0.1');
    await eventually(
      async () => (await hub.admin('GET', '/admin/instances')).body.length === 1,
      'the kernel to connect once ready',
    );
    const get = (key: string, page: number) =>
      fetch(`${url}/sandbox/dossiers/etats?numeroPage=${page}`, { headers: { 'x-api-key': key } });

    t.equal((await get('new-cfa-key-0001', 1)).status, 200, 'a new key: the one call of the slice');
    const refused = await get('new-cfa-key-0002', 2);
    t.equal(
      refused.status,
      429,
      'another new key in the same window: the slice is spent, so no grant within maxWaitMs',
    );
    t.equal(
      (await get('new-cfa-key-0001', 3)).status,
      200,
      'the first key, accepted by the upstream, is proven now: the rest of the budget',
    );
    t.match((await hub.admin('GET', '/admin/limits')).body.limits, [
      { occupied: 2, unproven: { limit: 1, occupied: 1, waiting: 0 } },
    ]);
  },
);

t.test('a second admission provider next to the hub is a start-up error naming both', async (t) => {
  const hub = await startTestHub({ opcos: { sandbox: { limit: 3, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const sandbox = await startSandbox({ dossierCount: 5, factureCount: 2 });
  t.teardown(() => sandbox.close());
  const { key } = await hub.key('publisher');

  // Extra plugins register after the configured ones: the hub has provided first.
  await t.rejects(kernelWithHub(t, hub, sandbox, key, [rival('rival')]), {
    message: 'admission has two providers: "hub" from plugin hub and "rival-budget" from plugin rival; enable only one',
  });
  // The other order: the rival registers first, the hub plugin (given as an object) second.
  await t.rejects(kernelWithHub(t, hub, sandbox, key, [rival('early'), hubPlugin], []), {
    message: 'admission has two providers: "early-budget" from plugin early and "hub" from plugin hub; enable only one',
  });

  // Connecting waits for the ready kernel: the failed start-ups left no instance at the hub.
  await sleep(300);
  t.same(
    (await hub.admin('GET', '/admin/instances')).body,
    [],
    'no connection was made by a kernel that never started',
  );
});
