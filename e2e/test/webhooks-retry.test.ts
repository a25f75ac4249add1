// SPEC 6.3 with the default schedule: attempts at 0, 1 s, 5 s, 15 s; at most 4. Time is moved
// with a frozen TestClock: each retry is shown not to come a millisecond early, and to come when due.
import t, { type Test } from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { deliveryLogs, startService, startReceiver, KEY_A, type Receiver } from '../src/index.js';

const clock = new TestClock({ frozen: true });
const service = await startService({ clock });
t.teardown(() => service.close());

/** Nothing is due yet: a short real pause shows no attempt sneaks in early. */
async function noAttemptYet(t: Test, receiver: Receiver, count: number, what: string) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(receiver.received.length, count, what);
}

t.test('failing twice then succeeding is delivered in 3 attempts, at 0, +1 s and +5 s', async (t) => {
  const flaky = await startReceiver({ status: 200 }, clock);
  t.teardown(() => flaky.close());
  flaky.script.push({ status: 500 }, { status: 500 });
  const hook = (
    await service.request('POST', '/webhooks', { body: { callbackUrl: `${flaky.url}/h`, events: ['sync.started'] } })
  ).body;
  const started = clock.now();
  await service.kernel.emit({
    type: 'sync.started',
    tenant: tenantHash(KEY_A),
    opcoId: 'sandbox',
    data: { syncId: 'r1', total: 3 },
  });
  await flaky.waitFor(1);
  t.equal(flaky.received[0].at - started, 0, 'first attempt at once');
  await deliveryLogs(service, hook.id, (logs) => logs[0]?.attempts === 1);
  await clock.advance(999);
  await noAttemptYet(t, flaky, 1, 'not before 1 s');
  await clock.advance(1);
  await flaky.waitFor(2);
  await deliveryLogs(service, hook.id, (logs) => logs[0]?.attempts === 2);
  await clock.advance(4999);
  await noAttemptYet(t, flaky, 2, 'not before 5 s more');
  await clock.advance(1);
  const hits = await flaky.waitFor(3);
  t.same(
    hits.slice(1).map((hit, i) => hit.at - hits[i].at),
    [1000, 5000],
    'the schedule, exactly',
  );
  t.equal(new Set(hits.map((h) => h.headers['svc-delivery-id'])).size, 1, 'same Svc-Delivery-Id on every attempt');
  const logs = await deliveryLogs(service, hook.id, (l) => l[0]?.attempts === 3 && l[0].status === 'delivered');
  t.match(logs[0], { status: 'delivered', attempts: 3, statusCode: 200 });
});

t.test('always failing: 4 attempts, the last 15 s after the third, then failed and no fifth', async (t) => {
  const down = await startReceiver({ status: 503 }, clock);
  t.teardown(() => down.close());
  const hook = (
    await service.request('POST', '/webhooks', { body: { callbackUrl: `${down.url}/h`, events: ['sync.completed'] } })
  ).body;
  await service.kernel.emit({
    type: 'sync.completed',
    tenant: tenantHash(KEY_A),
    opcoId: 'sandbox',
    data: { syncId: 'r2', total: 3, durationMs: 1 },
  });
  for (const [attempt, delay] of [
    [1, 1000],
    [2, 5000],
    [3, 15_000],
  ] as const) {
    await down.waitFor(attempt);
    await deliveryLogs(service, hook.id, (logs) => logs[0]?.attempts === attempt);
    await clock.advance(delay);
  }
  const hits = await down.waitFor(4);
  t.same(
    hits.slice(1).map((hit, i) => hit.at - hits[i].at),
    [1000, 5000, 15_000],
  );
  const logs = await deliveryLogs(service, hook.id, (l) => l[0]?.status === 'failed');
  t.match(logs[0], { status: 'failed', attempts: 4, statusCode: 503, error: 'receiver answered 503' });
  await clock.advance(60 * 60_000);
  await noAttemptYet(t, down, 4, 'no fifth attempt, even an hour later');
  const metrics = (await service.get('/metrics', { key: null })).text;
  t.match(metrics, /opco_proxy_webhook_attempts_total\{outcome="delivered"\} 1/);
  t.match(
    metrics,
    /opco_proxy_webhook_attempts_total\{outcome="retrying"\} 5/,
    '2 + 3 failed attempts before the last',
  );
  t.match(metrics, /opco_proxy_webhook_attempts_total\{outcome="failed"\} 1/);
});
