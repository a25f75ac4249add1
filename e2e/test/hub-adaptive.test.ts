// The adaptive limit end to end (SPEC 1.1 step 9, D29): instances report their 60-second window,
// a run of upstream 429s makes the hub lower the effective limit (GET /admin/limits) and grants
// follow it at once; windows without 429s raise it back step by step to the configured limit.
// The Prometheus metrics of both sides are read along the way.
//
// The instance's window is the spec's 60 s, so the limit can only climb once the 429s have left
// it: this file takes a little over a minute by design.
import t from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { clientLoad, eventually, maxInWindow, startFleet, startHubProcess, HUB_SECRET } from '../src/index.js';

const RATE = { limit: 6, windowMs: 2000 };
const STEP_MS = 500;

t.test('a run of upstream 429s lowers the effective limit, quiet windows restore it step by step', async (t) => {
  const upstream = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: HUB_SECRET });
  t.teardown(() => upstream.close());
  const hub = await startHubProcess({ opcos: { sandbox: RATE }, adaptive: { intervalMs: STEP_MS } });
  t.teardown(() => hub.stop());
  const fleet = await startFleet({
    hub, upstream, rateLimit: RATE,
    members: [{ name: 'adaptive-api-1', tenantId: 'adaptive', expectedInstances: 2 }, { name: 'adaptive-api-2', tenantId: 'adaptive', expectedInstances: 2 }],
  });
  t.teardown(() => fleet.close());

  // What GET /admin/limits said, every 200 ms, for the whole test.
  const seen: Array<{ at: number; effective: number; configured: number }> = [];
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const views = (await hub.admin('GET', '/admin/limits')).body as Array<{ tenantId: string; effectiveLimit: number; configuredLimit: number }>;
      const view = views.find((v) => v.tenantId === 'adaptive');
      if (view) seen.push({ at: Date.now(), effective: view.effectiveLimit, configured: view.configuredLimit });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  let stop = false;
  const load = Promise.all(fleet.members.map((m) => clientLoad(m.service, { concurrency: 2, stop: () => stop })));
  t.teardown(async () => {
    stop = true;
    watching = false;
    await Promise.all([load, watch]);
  });

  await eventually(() => seen.some((s) => s.effective === RATE.limit), 'the budget at its configured limit', 10_000);
  upstream.faults.add({ route: 'GET /v2/dossiers/etats', status: 429, headers: { 'retry-after': '1' }, times: 6 });
  const lowered = await eventually(() => seen.find((s) => s.effective < RATE.limit), 'the effective limit to go down', 20_000);
  t.ok(lowered.effective >= Math.ceil(RATE.limit * 0.1), `lowered to ${lowered.effective}, never below 10% of ${RATE.limit}`);
  t.equal(lowered.configured, RATE.limit, 'the configured limit stays as it was');

  const hubMetrics = (await hub.admin('GET', '/metrics', undefined, null)).body as string;
  t.match(hubMetrics, new RegExp(`opco_proxy_hub_effective_limit\\{tenant_id="adaptive",opco="sandbox"\\} ${lowered.effective}`), 'hub metric: effective limit');
  t.match(hubMetrics, /opco_proxy_hub_grants_total\{tenant_id="adaptive",opco="sandbox"\} [1-9]/, 'hub metric: grants');
  t.match(hubMetrics, /opco_proxy_hub_waits_total\{tenant_id="adaptive",opco="sandbox"\} [1-9]/, 'hub metric: asks that waited');
  t.match(hubMetrics, /opco_proxy_hub_wait_seconds_count\{tenant_id="adaptive",opco="sandbox"\} [1-9]/, 'hub metric: wait time');
  t.match(hubMetrics, /opco_proxy_hub_connected_instances\{tenant_id="adaptive"\} 2/, 'hub metric: connected instances');
  const instanceMetrics = (await fleet.members[0]!.service.get('/metrics')).text;
  t.match(instanceMetrics, /opco_proxy_hub_connection_state\{state="connected"\} 1/, 'instance metric: connection state');
  t.match(instanceMetrics, /opco_proxy_hub_grant_wait_seconds_count\{opco="sandbox",mode="hub"\} [1-9]/, 'instance metric: grant wait');

  const restored = await eventually(() => seen.find((s) => s.at > lowered.at && s.effective === RATE.limit), 'the effective limit to climb back', 100_000);
  const path = seen.filter((s) => s.at >= lowered.at && s.at <= restored.at).map((s) => s.effective);
  const climbs = path.slice(1).map((value, i) => value - path[i]!).filter((delta) => delta > 0);
  t.ok(climbs.length >= 2 && climbs.every((delta) => delta <= Math.ceil(RATE.limit * 0.1)), `raised back step by step: ${[...new Set(path)].join(' → ')}`);

  // While it was down, grants kept to it: calls that arrived from a moment after the hub showed
  // the lower limit until a moment before it first climbed.
  // A burst of 429s may lower it more than once before it climbs: measure from when it reached
  // its lowest, so calls granted under an earlier, higher effective limit are not held to it.
  const low = Math.min(...path);
  const lowest = seen.find((s) => s.at >= lowered.at && s.effective === low)!;
  const firstClimb = seen.find((s) => s.at > lowest.at && s.effective > low)!;
  const during = fleet.calls((c) => c.tenantId === 'adaptive' && c.at > lowest.at + 300 && c.at < firstClimb.at - 300);
  t.ok(during.length >= low, `${during.length} calls while the limit was down`);
  t.ok(maxInWindow(during.map((c) => c.at), RATE.windowMs) <= low, `at most ${maxInWindow(during.map((c) => c.at), RATE.windowMs)} calls in any window while the effective limit was ${low}`);
  t.ok(fleet.calls((c) => c.tenantId === 'adaptive').every((c) => c.hubToken?.valid), 'every call, answered 429 or not, carried its own grant');
});
