// Without its hub (D12, D30): an instance serves with `Svc-Hub-Token: DISCONNECTED` from a local
// bucket of limit / expectedInstances per window that waits and never rejects; asks waiting for a
// grant move there at once; a restarted hub on the same port is found again within the 5 s
// backoff cap, and no rolling window the upstream sees goes over the limit across the restart.
// Assertions count the calls' times; none depends on how fast the machine is, except the
// reconnection bound the brief asks for, which is given a second of slack.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedStore, type AdmissionLease } from '@opco-proxy/core';
import { verifyGrantToken } from '../src/index.js';
import { admissionFor, eventually, request, SECRET, startTestHub } from './fixtures/hub-harness.js';
import { maxInWindow } from './fixtures/windows.js';

const W = 1000;

t.test('hub closed: DISCONNECTED leases at the local share per window, after a window of quiet, never refused', async (t) => {
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
  const leases = await Promise.all(Array.from({ length: 6 }, async () => {
    // Synchronous asks: with the hub, 100 ms then 429; without it, they wait and are never refused.
    const lease = await admission.admit(request({ rateLimit, synchronous: true }));
    times.push(Date.now());
    await sleep(20);
    await lease.release({ status: 200, latencyMs: 20 });
    return lease;
  }));
  t.ok(leases.every((lease) => lease.headers['Svc-Hub-Token'] === 'DISCONNECTED'));
  t.equal(maxInWindow(times, W), 2, 'floor(4 / 2 instances) = 2 per window');
  t.ok(Math.min(...times) >= closedAt + W, 'the first local call comes a window after the hub was lost');
});

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
  t.ok(Date.now() - started < rateLimit.windowMs / 2, 'the whole local share at once: no quiet window for an instance that never had a hub');
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
  await eventually(async () => (await hub.admin('GET', '/admin/limits')).body[0]?.waiting === 1, 'the ask to wait at the hub');
  await hub.close();
  await eventually(() => admission.state !== 'connected', 'the instance to notice');
  await sleep(50);
  const releasedAt = Date.now();
  await held.release({ status: 200, latencyMs: 1 });
  const lease = await moved;
  t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
  t.ok(Date.now() >= releasedAt + W, 'a window after the instance’s own granted call ended');
});

t.test('hub restarted on the same port: reconnection within 5 s, no window over the limit across the restart', async (t) => {
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
      calls.push({ at: Date.now(), token: lease.headers['Svc-Hub-Token']! });
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
  await eventually(() => admission.state === 'connected', 'reconnection', 10_000);
  const reconnectMs = Date.now() - listeningAt;
  t.ok(reconnectMs <= 5000 + 1000, `reconnected ${reconnectMs} ms after the hub came back (backoff capped at 5 s)`);
  const restartedAt = Date.now();
  await eventually(() => calls.filter((c) => c.at > restartedAt && c.token !== 'DISCONNECTED').length >= 6, 'grants after the restart');
  running = false;
  await admission.close();
  await Promise.all(workers);

  const before = calls.filter((c) => c.at < listeningAt && c.token !== 'DISCONNECTED');
  const local = calls.filter((c) => c.token === 'DISCONNECTED');
  const after = calls.filter((c) => c.at > restartedAt && c.token !== 'DISCONNECTED');
  t.ok(before.length >= 6 && local.length >= 1 && after.length >= 6, `${before.length} granted, ${local.length} local, ${after.length} granted after the restart`);
  t.match(await verifyGrantToken(after[0]!.token, SECRET), { opcoId: 'op' }, 'the new hub signs with the same secret');
  t.equal(maxInWindow(calls.map((c) => c.at), W), 3, 'the limit is reached and never exceeded, across the restart');
  const instances = (await second.admin('GET', '/admin/instances')).body;
  t.same(instances, [], 'the instance closed');
});
