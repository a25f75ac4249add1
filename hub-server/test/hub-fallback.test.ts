// Without its hub (D12, D30): an instance serves with `Svc-Hub-Token: DISCONNECTED` from a local
// bucket of limit / expectedInstances per window that waits and never rejects; asks waiting for a
// grant move there at once; a restarted hub on the same port is found again within the 5 s
// backoff cap, and no rolling window the upstream sees goes over the limit across the restart.
// Assertions count the calls' times; none depends on how fast the machine is. The 5 s bound is
// the backoff's, shown on a frozen clock whose timers ring only when the test advances it.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedStore, type AdmissionLease } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { verifyGrantToken } from '../src/index.js';
import { admissionFor, eventually, request, SECRET, startTestHub } from './fixtures/hub-harness.js';
import { maxInWindow } from './fixtures/windows.js';

const W = 1000;
/** The longest pause between two connection tries (D30). */
const MAX_BACKOFF_MS = 5000;

t.test(
  'hub closed: DISCONNECTED leases at the local share per window, after a window of quiet, never refused',
  async (t) => {
    const rateLimit = { limit: 4, windowMs: W };
    const hub = await startTestHub({ opcos: { op: rateLimit } });
    const { admission } = admissionFor(hub.url, (await hub.key('pub')).key, { expectedInstances: 2, maxWaitMs: 100 });
    t.teardown(() => admission.close());
    await eventually(() => admission.state === 'connected', 'connection');
    const granted = await admission.admit(request({ rateLimit, synchronous: true }));
    await granted.release({ status: 200, latencyMs: 5 });

    const closedAt = Date.now();
    await hub.close();
    await eventually(() => admission.state !== 'connected', 'the instance to notice');
    const times: number[] = [];
    const leases = await Promise.all(
      Array.from({ length: 6 }, async () => {
        // Synchronous asks: with the hub, 100 ms then 429; without it, they wait and are never refused.
        const lease = await admission.admit(request({ rateLimit, synchronous: true }));
        times.push(Date.now());
        await sleep(20);
        await lease.release({ status: 200, latencyMs: 20 });
        return lease;
      }),
    );
    t.ok(leases.every((lease) => lease.headers['Svc-Hub-Token'] === 'DISCONNECTED'));
    t.equal(maxInWindow(times, W), 2, 'floor(4 / 2 instances) = 2 per window');
    t.ok(Math.min(...times) >= closedAt + W, 'the first local call comes a window after the hub was lost');
  },
);

t.test('never connected: the instance serves at once from its local bucket', async (t) => {
  // A 60 s window: a quiet window before the first local call would take a minute.
  const rateLimit = { limit: 5, windowMs: 60_000 };
  const hub = await startTestHub();
  const url = hub.url;
  await hub.close(); // nothing listens there any more
  const { admission } = admissionFor(url, 'hk_whatever', { expectedInstances: 1 });
  t.teardown(() => admission.close());
  const started = Date.now();
  for (let i = 0; i < 5; i++) {
    const lease = await admission.admit(request({ rateLimit, synchronous: true }));
    t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
    await lease.release({ status: 200, latencyMs: 1 });
  }
  t.ok(
    Date.now() - started < rateLimit.windowMs / 2,
    'the whole local share at once: no quiet window for an instance that never had a hub',
  );
  t.not(admission.state, 'connected');
});

t.test('an ask waiting for a grant when the connection drops moves to the local bucket', async (t) => {
  const rateLimit = { limit: 1, windowMs: W };
  const hub = await startTestHub({ opcos: { op: rateLimit } });
  const { admission } = admissionFor(hub.url, (await hub.key('pub')).key);
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');
  const held = await admission.admit(request({ rateLimit }));
  const moved = admission.admit(request({ rateLimit }));
  await eventually(
    async () => (await hub.admin('GET', '/admin/limits')).body.limits[0]?.waiting === 1,
    'the ask to wait at the hub',
  );
  await hub.close();
  await eventually(() => admission.state !== 'connected', 'the instance to notice');
  await sleep(50);
  const releasedAt = Date.now();
  await held.release({ status: 200, latencyMs: 1 });
  const lease = await moved;
  t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
  t.ok(Date.now() >= releasedAt + W, 'a window after the instance’s own granted call ended');
});

t.test('reconnection tries come at most 5 s apart: a hub back on the same port is found by the next one', async (t) => {
  const clock = new TestClock({ frozen: true });
  const store = await createEmbeddedStore(); // the hub's store outlives its process: its keys
  t.teardown(() => store.close());
  const first = await startTestHub({ store });
  const { key } = await first.key('pub');
  const logs: string[] = [];
  const { admission } = admissionFor(first.url, key, {}, logs, undefined, clock);
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');
  await first.close();
  await eventually(() => admission.state === 'disconnected', 'the instance to notice');
  // While nothing listens, every try fails and the pause before the next one doubles from 100 ms;
  // past 6 tries it is at its cap. Each advance of 5 s must bring exactly one more try.
  const tries = () => logs.filter((line) => line.includes('hub connection failed')).length;
  const before = tries();
  for (let n = 1; n <= 8; n++) {
    await clock.advance(MAX_BACKOFF_MS);
    // Disconnected again after its failure: the next try is scheduled by then.
    await eventually(() => tries() === before + n && admission.state === 'disconnected', `try ${n} to fail`);
  }
  const second = await startTestHub({ store, port: first.hub.port });
  t.teardown(() => second.close());
  await clock.advance(MAX_BACKOFF_MS);
  await eventually(() => admission.state === 'connected', 'the next try to find the hub back');
  t.equal(tries(), before + 8, 'found at the first try after it came back');
});

t.test('hub restarted on the same port: found again, no window over the limit across the restart', async (t) => {
  const rateLimit = { limit: 3, windowMs: W };
  const store = await createEmbeddedStore(); // the hub's store outlives its process: keys and journal
  t.teardown(() => store.close());
  const first = await startTestHub({ opcos: { op: rateLimit }, store });
  const { key } = await first.key('pub');
  const { admission } = admissionFor(first.url, key);
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');

  const calls: Array<{ at: number; token: string }> = [];
  let running = true;
  const worker = async () => {
    while (running) {
      let lease: AdmissionLease;
      try {
        lease = await admission.admit(request({ rateLimit }));
      } catch {
        return; // the provider closed at the end of the test
      }
      calls.push({ at: Date.now(), token: lease.headers['Svc-Hub-Token'] });
      await sleep(30); // the upstream call
      await lease.release({ status: 200, latencyMs: 30 });
    }
  };
  const workers = Array.from({ length: 4 }, worker);

  await eventually(() => calls.length >= 6, 'grants before the restart');
  await first.close();
  await eventually(() => calls.some((c) => c.token === 'DISCONNECTED'), 'local calls while the hub is down');
  await sleep(300);
  const second = await startTestHub({ opcos: { op: rateLimit }, store, port: first.hub.port });
  t.teardown(() => second.close());
  const listeningAt = Date.now();
  // Within the 5 s backoff cap (the subtest above); this bound only keeps a failure from hanging.
  await eventually(() => admission.state === 'connected', 'reconnection', 30_000);
  const restartedAt = Date.now();
  await eventually(
    () => calls.filter((c) => c.at > restartedAt && c.token !== 'DISCONNECTED').length >= 6,
    'grants after the restart',
  );
  running = false;
  await admission.close();
  await Promise.all(workers);

  const before = calls.filter((c) => c.at < listeningAt && c.token !== 'DISCONNECTED');
  const local = calls.filter((c) => c.token === 'DISCONNECTED');
  const after = calls.filter((c) => c.at > restartedAt && c.token !== 'DISCONNECTED');
  t.ok(
    before.length >= 6 && local.length >= 1 && after.length >= 6,
    `${before.length} granted, ${local.length} local, ${after.length} granted after the restart`,
  );
  t.match(await verifyGrantToken(after[0].token, SECRET), { opcoId: 'op' }, 'the new hub signs with the same secret');
  t.equal(
    maxInWindow(
      calls.map((c) => c.at),
      W,
    ),
    3,
    'the limit is reached and never exceeded, across the restart',
  );
  const instances = (await second.admin('GET', '/admin/instances')).body;
  t.same(instances, [], 'the instance closed');
});
