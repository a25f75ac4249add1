/**
 * The instance side of the hub end to end (SPEC 1.1 step 4, 5.8; D11, D26, D29), run on embedded
 * backends and on MongoDB + RabbitMQ: a real hub process, three instances (two of fleet A,
 * one of fleet B) and a sandbox upstream that verifies every `Svc-Hub-Token` and records
 * when each call arrived. Small windows (6 calls per 2 s) keep each case to a few windows.
 */
import type { Test } from 'tap';
import { type Store } from '@opco-proxy/core';
import { authenticate, type Config } from '@opco-proxy/core/application';
import { startSandbox, type Sandbox } from '@opco-proxy/adapter-sandbox';
import { startHubProcess, HUB_SECRET, type HubProcess } from './hub-process.js';
import { clientLoad, startInstanceGroup, type InstanceGroup, type UpstreamCall } from './hub-instances.js';
import { dossierBody, waitForJob } from './jobs-client.js';
import { eventually } from './eventually.js';
import { maxInWindow } from './rate-window.js';
import { KEY_A, KEY_B } from './harness.js';

export const HUB_LIMIT = { limit: 6, windowMs: 2000 };
const { limit: LIMIT, windowMs: W } = HUB_LIMIT;

export interface HubSuiteBackends {
  /** The hub process's store (holds its keys and journal). */
  hubStore: Record<string, unknown>;
  /** Instances' store and queue per fleet, or undefined for embedded ones. */
  instances?: () => (fleetId: string) => Partial<Pick<Config, 'store' | 'queue'>>;
}

let fleetCounter = 0;

export function hubSuite(t: Test, backends: HubSuiteBackends): void {
  let hub: HubProcess;
  let upstream: Sandbox;
  t.before(async () => {
    upstream = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: HUB_SECRET });
    hub = await startHubProcess({ opcos: { sandbox: HUB_LIMIT }, store: backends.hubStore });
  });
  t.teardown(async () => {
    await hub?.stop();
    await upstream?.close();
  });

  /** A, A, B: fresh fleets per case, so no case inherits another's budget. */
  async function startGroup(t: Test, plugins = ['hub']): Promise<{ group: InstanceGroup; a: string; b: string }> {
    const n = ++fleetCounter;
    const a = `publisher-a${n}`;
    const b = `publisher-b${n}`;
    const perFleet = backends.instances?.();
    const stores: Record<string, Store> = {};
    const started = await startInstanceGroup({
      hub,
      upstream,
      rateLimit: HUB_LIMIT,
      plugins,
      backends: perFleet,
      stores,
      members: [
        { name: `${a}-api-1`, fleetId: a, expectedInstances: 2 },
        { name: `${a}-api-2`, fleetId: a, expectedInstances: 2 },
        { name: `${b}-api-1`, fleetId: b },
      ],
    });
    t.teardown(() => started.close());
    return { group: started, a, b };
  }

  t.test(
    'every upstream call, from a client GET or from a worker, carries its own verified grant with the claims of D26',
    async (t) => {
      const { group: f, a, b } = await startGroup(t, ['jobs', 'hub']);
      const instanceIds = new Map<string, string>(
        (await hub.admin('GET', '/admin/instances')).body.map((i: { name: string; instanceId: string }) => [
          i.name,
          i.instanceId,
        ]),
      );
      for (const member of f.members) {
        for (const page of [1, 2])
          t.equal((await member.service.get(`/sandbox/dossiers/etats?numeroPage=${page}`)).status, 200);
      }
      const accepted = await f.members[0].service.request('POST', '/sandbox/dossiers', { body: dossierBody() });
      t.equal(accepted.status, 202, accepted.text);
      const job = await waitForJob(f.members[0].service, accepted.body.statusUrl, { timeoutMs: 20_000 });
      t.equal(job.status, 'completed', 'the worker made its upstream call');

      const calls = f.calls((c) => c.fleetId === a || c.fleetId === b);
      t.equal(calls.length, 7, "six GETs and the job's POST");
      t.ok(
        calls.some((c) => c.path === '/v1/dossiers'),
        "the worker's call is among them",
      );
      for (const call of calls) {
        t.equal(
          call.hubToken?.valid,
          true,
          `${call.instance} ${call.path}: grant verified with the secret (${call.hubToken?.reason ?? 'ok'})`,
        );
        const claims = call.hubToken!.claims!;
        const post = call.path === '/v1/dossiers';
        t.match(claims, {
          opcoId: 'sandbox',
          method: post ? 'POST' : 'GET',
          route: post ? 'POST /dossiers' : 'GET /dossiers/etats',
          instanceId: instanceIds.get(call.instance),
          iss: 'opco-proxy-hub',
          jti: /^[0-9a-f]{32}$/,
        });
        t.equal(claims.exp, claims.iat + 30, 'exp = iat + 30');
        t.ok(Math.abs(claims.iat * 1000 - call.at) < 5000, 'issued just before the call');
      }
      t.equal(new Set(calls.map((c) => c.hubToken?.claims?.jti)).size, calls.length, 'one grant per call');
    },
  );

  t.test('under demand from every instance, no rolling window holds more than the limit per fleet', async (t) => {
    const { group: f, a, b } = await startGroup(t);
    const startedAt = Date.now();
    let stop = false;
    const load = Promise.all(f.members.map((m) => clientLoad(m.service, { concurrency: LIMIT, stop: () => stop })));
    await eventually(
      () => f.calls((c) => c.fleetId === a).length >= 3 * LIMIT + 1,
      'three windows of calls of fleet A',
      20_000,
    );
    stop = true;
    const statuses = (await load).flat();
    t.ok(
      statuses.every((s) => s === 200),
      'every client GET was answered once its grant came',
    );
    const ofA = f.calls((c) => c.fleetId === a && c.at >= startedAt);
    const ofB = f.calls((c) => c.fleetId === b && c.at >= startedAt);
    t.ok(ofA.every((c) => c.hubToken?.valid) && ofB.every((c) => c.hubToken?.valid), 'all granted');
    t.equal(
      maxInWindow(
        ofA.map((c) => c.at),
        W,
      ),
      LIMIT,
      `fleet A, two instances: the limit reached and never exceeded (${ofA.length} calls)`,
    );
    t.equal(
      maxInWindow(
        ofB.map((c) => c.at),
        W,
      ),
      LIMIT,
      'fleet B has a budget of its own, not shared with A',
    );
    t.ok(new Set(ofA.map((c) => c.instance)).size === 2, 'both instances of A were served');
  });

  t.test('one busy instance gets the whole budget while the others are idle', async (t) => {
    const { group: f, a } = await startGroup(t);
    const busy = f.members[0];
    const windows = 5;
    let stop = false;
    const load = clientLoad(busy.service, { concurrency: 3 * LIMIT, stop: () => stop });
    const first = (await eventually(() => f.calls((c) => c.fleetId === a)[0], 'the first call')).at;
    await eventually(
      () => f.calls((c) => c.fleetId === a && c.at >= first + windows * W).length > 0,
      `${windows} windows of demand at 3x the limit`,
      30_000,
    );
    stop = true;
    await load;
    const made = f.calls((c) => c.fleetId === a && c.at < first + windows * W);
    // The whole budget: each slot is used again as soon as it frees (W after the call that took
    // it), so a call and the one LIMIT calls later are about W apart; a budget split with the idle
    // instance would put 2 W between them. Half a window is left for each grant's round trip, so
    // a loaded machine slows the calls without failing the case.
    const times = made.map((c) => c.at).sort((x, y) => x - y);
    const gaps = times
      .slice(LIMIT)
      .map((at, i) => at - times[i])
      .sort((x, y) => x - y);
    const median = gaps[Math.floor(gaps.length / 2)];
    t.ok(gaps.length >= (windows - 2) * LIMIT, `demand over ${windows} windows gave ${made.length} calls`);
    t.ok(
      median < 1.5 * W,
      `a slot is used again once it frees: median time between a call and the one ${LIMIT} later ${median} ms (window ${W} ms)`,
    );
    t.ok(
      made.every((c) => c.instance === busy.name),
      'all of them by the busy instance',
    );
    t.equal(
      maxInWindow(
        f.calls((c) => c.fleetId === a).map((c) => c.at),
        W,
      ),
      LIMIT,
      'and never over the limit',
    );
  });

  t.test('waiting calls are served by priority, CFA tenants of one priority taking turns (D11)', async (t) => {
    const { group: f, a } = await startGroup(t);
    const [one, two] = f.members;
    const call = (member: typeof one, key: string, page: string, priority: number) =>
      member.service.kernel.pipeline.run(
        member.service.kernel.opcos.context('sandbox', 'GET /dossiers/etats', authenticate(key), {
          query: { numeroPage: page },
          priority,
        }),
      );
    // Fill the window: until these leave it, every ask waits at the hub.
    await Promise.all(Array.from({ length: LIMIT }, (_, i) => call(one, KEY_A, `9${i}`, 10)));
    const sent: Array<Promise<unknown>> = [];
    for (let i = 0; i < 2 * LIMIT; i++) sent.push(call(two, KEY_A, `100${i}`, 10)); // CFA tenant A's sync, asked first
    for (let i = 0; i < 2 * LIMIT; i++) sent.push(call(two, KEY_B, `200${i}`, 10)); // CFA tenant B's sync
    for (let i = 0; i < LIMIT; i++) sent.push(call(one, KEY_A, `50${i}`, 5));
    for (let i = 0; i < LIMIT; i++)
      sent.push(one.service.get(`/sandbox/dossiers/etats?numeroPage=1${i}`, { key: KEY_B }));
    let waiting: number | undefined;
    await eventually(
      async () => {
        const views = (await hub.admin('GET', '/admin/limits')).body.limits as Array<{
          fleetId: string;
          waiting: number;
        }>;
        waiting = views.find((v) => v.fleetId === a)?.waiting;
        return waiting === 6 * LIMIT;
      },
      () => `every ask waiting at the hub (${waiting} of ${6 * LIMIT})`,
    );
    await Promise.all(sent);

    const order = f
      .calls((c) => c.fleetId === a)
      .slice(LIMIT)
      .map(kind);
    t.same(order.slice(0, LIMIT).sort(), Array(LIMIT).fill('client'), 'client GETs (priority 1) first');
    t.same(order.slice(LIMIT, 2 * LIMIT).sort(), Array(LIMIT).fill('normal'), 'then priority 5');
    for (let start = 2 * LIMIT; start < order.length; start += LIMIT) {
      const burst = order.slice(start, start + LIMIT).sort();
      t.same(
        burst,
        [...Array(LIMIT / 2).fill('low:A'), ...Array(LIMIT / 2).fill('low:B')],
        `then priority 10, the two CFA tenants taking turns (${burst.join(' ')})`,
      );
    }
    t.equal(order.length, 6 * LIMIT, 'every waiting ask was served');
  });
}

/** Which kind of ask made an upstream call, read from the page it asked for. */
function kind(call: UpstreamCall): string {
  const page = call.query.numeroPage ?? '';
  if (page.startsWith('100')) return 'low:A';
  if (page.startsWith('200')) return 'low:B';
  if (page.startsWith('50')) return 'normal';
  return 'client';
}
