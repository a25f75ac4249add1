// The `hub` plugin's bridge onto the pipeline's `admit` hook (until core's admission seam is
// wired): core's real Hooks, a real hub; the grant lands in the upstream headers, a client's call
// is synchronous, and the release reports the upstream's status.
import t from 'tap';
import { createPrometheusMetrics, Hooks, MetricsWindow, PRIORITY, type CallContext, type PluginApi } from '@opco-proxy/core';
import hubPlugin from '../src/index.js';
import { eventually, logInto, startTestHub } from './fixtures/hub-harness.js';

t.test('the plugin admits through the hub and releases with the call outcome', async (t) => {
  const rateLimit = { limit: 1, windowMs: 60_000 };
  const hub = await startTestHub({ opcos: { op: rateLimit } });
  t.teardown(() => hub.close());
  const { key } = await hub.key('pub');
  process.env.TEST_PLUGIN_HUB_KEY = key;
  t.teardown(() => void delete process.env.TEST_PLUGIN_HUB_KEY);

  const hooks = new Hooks();
  const prometheus = createPrometheusMetrics();
  const opco = { id: 'op', rateLimit } as CallContext['opco'];
  const api = {
    config: { hub: { url: hub.url.replace('http', 'ws'), apiKeyEnv: 'TEST_PLUGIN_HUB_KEY', maxWaitMs: 200 } },
    log: logInto([]), prometheus, window: new MetricsWindow(), hooks, opcos: { list: () => [opco] },
  } as unknown as PluginApi;
  await hubPlugin.register(api);
  t.teardown(() => hooks.runLifecycle('close'));
  await eventually(async () => (await hub.admin('GET', '/admin/instances')).body.length === 1, 'the instance to connect');

  const context = (priority: number): CallContext => ({
    opco, route: 'GET /dossiers', method: 'GET', tenant: { hash: 'cfa-hash', apiKey: 'k' }, priority, upstreamHeaders: {},
    warnings: [], startedAt: Date.now(), cache: 'none', query: {},
  } as unknown as CallContext);
  const first = context(PRIORITY.normal);
  await hooks.runPipeline('admit', first);
  t.match(first.upstreamHeaders, { 'Svc-Hub-Token': /^ey/ });
  const client = context(PRIORITY.client);
  await t.rejects(hooks.runPipeline('admit', client), { code: 'RATE_LIMITED' }, 'a client call is synchronous: 429 after maxWaitMs');

  first.response = { status: 429, body: {}, headers: {} };
  await first.releaseBudget!();
  await eventually(async () => {
    const [instance] = (await hub.admin('GET', '/admin/instances')).body;
    return instance?.metrics?.op !== undefined;
  }, 'a metrics report from the kernel window');
  t.match(await prometheus.registry.metrics(), /opco_proxy_hub_connection_state\{state="connected"\} 1/, 'instance metrics on the kernel registry');
});
