// SPEC 6.3 with the default schedule: attempts at 0, 1 s, 5 s, 15 s; at most 4.
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { deliveryLogs, startService, startReceiver, KEY_A } from '../src/index.js';

t.test('failing twice then succeeding is delivered in 3 attempts; always failing fails after 4', async (t) => {
  const service = await startService();
  const flaky = await startReceiver();
  const down = await startReceiver({ status: 503 });
  t.teardown(async () => {
    await service.close();
    await flaky.close();
    await down.close();
  });
  flaky.script.push({ status: 500 }, { status: 500 });
  const a = (await service.request('POST', '/webhooks', { body: { callbackUrl: `${flaky.url}/h`, events: ['sync.started'] } })).body;
  const b = (await service.request('POST', '/webhooks', { body: { callbackUrl: `${down.url}/h`, events: ['sync.started'] } })).body;
  const started = Date.now();
  await service.kernel.emit({ type: 'sync.started', tenant: tenantHash(KEY_A), opcoId: 'sandbox', data: { syncId: 'r', total: 3 } });

  const flakyHits = await flaky.waitFor(3, 15_000);
  const gaps = flakyHits.slice(1).map((hit, i) => hit.at - flakyHits[i].at);
  t.ok(flakyHits[0].at - started < 1000, 'first attempt at once');
  t.ok(gaps[0] >= 900 && gaps[0] < 3000, `second after ~1 s (${gaps[0]} ms)`);
  t.ok(gaps[1] >= 4900 && gaps[1] < 8000, `third after ~5 s (${gaps[1]} ms)`);
  t.equal(new Set(flakyHits.map((h) => h.headers['svc-delivery-id'])).size, 1, 'same Svc-Delivery-Id on every attempt');
  const logsA = await deliveryLogs(service, a.id, (logs) => logs[0]?.attempts === 3 && logs[0].status === 'delivered');
  t.match(logsA[0], { status: 'delivered', attempts: 3, statusCode: 200 });

  const downHits = await down.waitFor(4, 25_000);
  const last = downHits[3].at - downHits[2].at;
  t.ok(last >= 14_900 && last < 19_000, `fourth after ~15 s (${last} ms)`);
  const logsB = await deliveryLogs(service, b.id, (logs) => logs[0]?.status === 'failed');
  t.match(logsB[0], { status: 'failed', attempts: 4, statusCode: 503, error: 'receiver answered 503' });
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(down.received.length, 4, 'no fifth attempt');
  const metrics = (await service.get('/metrics', { key: null })).text;
  t.match(metrics, /opco_proxy_webhook_attempts_total\{outcome="delivered"\} 1/);
  t.match(metrics, /opco_proxy_webhook_attempts_total\{outcome="retrying"\} 5/, '2 + 3 failed attempts before the last');
  t.match(metrics, /opco_proxy_webhook_attempts_total\{outcome="failed"\} 1/);
});
