// The adaptive limit end to end (SPEC 1.1 step 9, D29): instances report their 60-second window,
// a run of upstream 429s makes the hub lower the effective limit (GET /admin/limits) and grants
// follow it at once; windows without 429s raise it back step by step to the configured limit.
// The Prometheus metrics of both sides are read along the way.
//
// The instance's window is the spec's 60 s, so the limit can only climb once the 429s have left
// it: this file takes a little over a minute by design.
//
// The hub is a process of its own on the real clock, watched by polling GET /admin/limits. No
// check assumes a poll came on time: a poll saw the hub at some moment between its sending and
// its answer, the hub steps at most once per STEP_MS, and calls are put to a period by their
// grant's own `iat` and their arrival, each on the safe side.
import t from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { clientLoad, eventually, maxInWindow, startInstanceGroup, startHubProcess, HUB_SECRET } from '../src/index.js';

const RATE = { limit: 6, windowMs: 2000 };
const STEP_MS = 500;
/** The hub's rise per step: increaseFraction 0.1 of the configured limit, at least 1. */
const RISE = Math.max(1, Math.ceil(RATE.limit * 0.1));
const FLOOR = Math.ceil(RATE.limit * 0.1);

interface Seen {
  /** When the poll was sent and when its answer came: the hub's state lies in between. */
  sentAt: number;
  at: number;
  effective: number;
  configured: number;
}

t.test('a run of upstream 429s lowers the effective limit, quiet windows restore it step by step', async (t) => {
  const upstream = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: HUB_SECRET });
  t.teardown(() => upstream.close());
  const hub = await startHubProcess({ opcos: { sandbox: RATE }, adaptive: { intervalMs: STEP_MS } });
  t.teardown(() => hub.stop());
  const group = await startInstanceGroup({
    hub,
    upstream,
    rateLimit: RATE,
    members: [
      { name: 'adaptive-api-1', fleetId: 'adaptive', expectedInstances: 2 },
      { name: 'adaptive-api-2', fleetId: 'adaptive', expectedInstances: 2 },
    ],
  });
  t.teardown(() => group.close());

  // What GET /admin/limits said, every 200 ms, for the whole test.
  const seen: Seen[] = [];
  let watching = true;
  const watch = (async () => {
    while (watching) {
      const sentAt = Date.now();
      const views = (await hub.admin('GET', '/admin/limits')).body.limits as Array<{
        fleetId: string;
        effectiveLimit: number;
        configuredLimit: number;
      }>;
      const view = views.find((v) => v.fleetId === 'adaptive');
      if (view) seen.push({ sentAt, at: Date.now(), effective: view.effectiveLimit, configured: view.configuredLimit });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  let stop = false;
  const load = Promise.all(group.members.map((m) => clientLoad(m.service, { concurrency: 2, stop: () => stop })));
  t.teardown(async () => {
    stop = true;
    watching = false;
    await Promise.all([load, watch]);
  });

  await eventually(() => seen.some((s) => s.effective === RATE.limit), 'the budget at its configured limit', 10_000);
  upstream.faults.add({ route: 'GET /v2/dossiers/etats', status: 429, headers: { 'retry-after': '1' }, times: 6 });
  const lowered = await eventually(
    () => seen.find((s) => s.effective < RATE.limit),
    'the effective limit to go down',
    20_000,
  );
  t.ok(lowered.effective >= FLOOR, `lowered to ${lowered.effective}, never below 10% of ${RATE.limit}`);
  t.equal(lowered.configured, RATE.limit, 'the configured limit stays as it was');

  const hubMetrics = (await hub.admin('GET', '/metrics', undefined, null)).body as string;
  // Read after the poll: a later report of the same 429s may have lowered it once more meanwhile.
  const metricLimit = Number(
    /opco_proxy_hub_effective_limit\{fleet_id="adaptive",opco="sandbox"\} (\d+)/.exec(hubMetrics)?.[1],
  );
  t.ok(
    metricLimit >= FLOOR && metricLimit <= lowered.effective,
    `hub metric: effective limit ${metricLimit}, at most the ${lowered.effective} seen`,
  );
  t.match(hubMetrics, /opco_proxy_hub_grants_total\{fleet_id="adaptive",opco="sandbox"\} [1-9]/, 'hub metric: grants');
  t.match(
    hubMetrics,
    /opco_proxy_hub_waits_total\{fleet_id="adaptive",opco="sandbox"\} [1-9]/,
    'hub metric: asks that waited',
  );
  t.match(
    hubMetrics,
    /opco_proxy_hub_wait_seconds_count\{fleet_id="adaptive",opco="sandbox"\} [1-9]/,
    'hub metric: wait time',
  );
  t.match(hubMetrics, /opco_proxy_hub_connected_instances\{fleet_id="adaptive"\} 2/, 'hub metric: connected instances');
  const instanceMetrics = (await group.members[0].service.get('/metrics')).text;
  t.match(
    instanceMetrics,
    /opco_proxy_hub_connection_state\{state="connected"\} 1/,
    'instance metric: connection state',
  );
  t.match(
    instanceMetrics,
    /opco_proxy_hub_grant_wait_seconds_count\{opco="sandbox",mode="hub"\} [1-9]/,
    'instance metric: grant wait',
  );

  const restored = await eventually(
    () => seen.find((s) => s.at > lowered.at && s.effective === RATE.limit),
    'the effective limit to climb back',
    100_000,
  );
  const climb = seen.filter((s) => s.at >= lowered.at && s.at <= restored.at);
  const path = climb.map((s) => s.effective);
  const low = Math.min(...path);
  const lowest = climb.find((s) => s.effective === low)!;
  // The last poll that still saw it at its lowest: it climbed after that poll was sent.
  const lastLow = climb.findLast((s) => s.effective === low)!;
  // Step by step: between two polls it rose by at most one step per STEP_MS that can have passed
  // between them, and the whole climb took one STEP_MS per step after the first.
  const stepsBetween = (a: Seen, b: Seen) => Math.floor((b.at - a.sentAt) / STEP_MS) + 1;
  const jumps = climb.slice(1).filter((s, i) => s.effective - climb[i].effective > RISE * stepsBetween(climb[i], s));
  const steps = Math.ceil((RATE.limit - low) / RISE);
  t.ok(
    steps >= 2 && jumps.length === 0 && restored.at - lastLow.sentAt >= (steps - 1) * STEP_MS,
    `raised back step by step: ${[...new Set(path)].join(' → ')} in ${restored.at - lastLow.sentAt} ms${jumps.length ? `; jumped to ${jumps.map((s) => s.effective).join(', ')}` : ''}`,
  );

  // While it was down, grants kept to it. A burst of 429s may lower it more than once before it
  // climbs: the calls held to the lowest limit are those granted from when a poll had seen it
  // there (the grant's `iat`, whole seconds, is never after its issue) until the last poll that
  // still saw it there was sent (a call arrives after its grant).
  const during = group.calls(
    (c) =>
      c.fleetId === 'adaptive' && (c.hubToken?.claims?.iat ?? Infinity) * 1000 >= lowest.at && c.at <= lastLow.sentAt,
  );
  t.ok(during.length >= low, `${during.length} calls while the limit was down`);
  t.ok(
    maxInWindow(
      during.map((c) => c.at),
      RATE.windowMs,
    ) <= low,
    `at most ${maxInWindow(
      during.map((c) => c.at),
      RATE.windowMs,
    )} calls in any window while the effective limit was ${low}`,
  );
  t.ok(
    group.calls((c) => c.fleetId === 'adaptive').every((c) => c.hubToken?.valid),
    'every call, answered 429 or not, carried its own grant',
  );
});
