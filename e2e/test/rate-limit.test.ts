// Pipeline step 4 without a hub (D11, D12): one budget per opcoId for every tenant and instance;
// never more than `limit` upstream calls in any rolling window; 429 RATE_LIMITED beyond.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedStore } from '@opco-proxy/core';
import { CALL_ALLOWANCE_SHARE } from '@opco-proxy/core/limits';
import { TestClock } from '@opco-proxy/core/testing';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { startService, maxInWindow, KEY_A, KEY_B } from '../src/index.js';

const LIMIT = 3;
const WINDOW_MS = 2000;

t.test('the budget is shared by tenants and refuses with 429 and Retry-After', async (t) => {
  // Frozen: on real time, eight calls in a row on a loaded machine could outlast the window and
  // free a slot for a fourth.
  const clock = new TestClock({ frozen: true });
  const service = await startService({ clock, opco: { rateLimit: { limit: LIMIT, windowMs: WINDOW_MS } } });
  t.teardown(() => service.close());
  const keys = [KEY_A, KEY_B];
  const replies = [];
  for (let i = 0; i < 8; i++)
    replies.push(await service.get(`/sandbox/dossiers/etats?numeroPage=${i + 1}`, { key: keys[i % 2] }));
  const ok = replies.filter((r) => r.status === 200);
  const limited = replies.filter((r) => r.status === 429);
  t.equal(ok.length, LIMIT, 'exactly limit calls admitted');
  t.equal(limited.length, 8 - LIMIT);
  for (const reply of limited) {
    t.equal(reply.body.code, 'RATE_LIMITED');
    const retryAfter = Number(reply.headers.get('retry-after'));
    // At most the window plus the allowance a claim stamps its slot ahead by, rounded up.
    t.ok(
      retryAfter >= 1 && retryAfter <= Math.ceil((WINDOW_MS * (1 + CALL_ALLOWANCE_SHARE)) / 1000),
      `Retry-After ${retryAfter}`,
    );
  }
  t.equal(service.sandbox.stats.calls['GET /v2/dossiers/etats'], LIMIT, 'upstream received exactly limit calls');
  await clock.advance(WINDOW_MS + 100);
  const later = await service.get('/sandbox/dossiers/etats?numeroPage=20');
  t.equal(later.status, 200, 'budget back after the window');
});

async function hammer(
  instances: Array<{ get: (path: string, o?: { key?: string }) => Promise<{ status: number }> }>,
  durationMs: number,
) {
  const started = Date.now();
  let n = 0;
  const statuses: number[] = [];
  await Promise.all(
    instances.map(async (instance, index) => {
      while (Date.now() - started < durationMs) {
        n += 1;
        const reply = await instance.get(`/sandbox/dossiers/etats?numeroPage=${1000 + n}`, {
          key: index % 2 ? KEY_A : KEY_B,
        });
        statuses.push(reply.status);
        await sleep(50);
      }
    }),
  );
  return statuses;
}

t.test('two instances on one embedded store never exceed the limit in any window', async (t) => {
  const upstream = await startSandbox();
  const store = await createEmbeddedStore({});
  const one = await startService({ upstream, store, opco: { rateLimit: { limit: LIMIT, windowMs: WINDOW_MS } } });
  const two = await startService({ upstream, store, opco: { rateLimit: { limit: LIMIT, windowMs: WINDOW_MS } } });
  t.teardown(async () => {
    await one.close();
    await two.close();
    await store.close();
    await upstream.close();
  });
  const arrivals: number[] = [];
  const received = upstream.received;
  const statuses = await hammer([one, two], 5000);
  for (const r of received) if (r.path === '/v2/dossiers/etats') arrivals.push((r as { at?: number }).at ?? 0);
  t.ok(statuses.includes(429), 'some calls refused');
  const admitted = statuses.filter((s) => s === 200).length;
  t.equal(admitted, arrivals.length, 'every admitted call reached the upstream once');
  t.ok(admitted >= LIMIT * 2, `budget used over several windows (${admitted})`);
  t.ok(
    maxInWindow(arrivals, WINDOW_MS) <= LIMIT,
    `max ${maxInWindow(arrivals, WINDOW_MS)} calls in any ${WINDOW_MS} ms window`,
  );
});

t.test(
  'two instances on MongoDB share the budget',
  { skip: !process.env.MONGODB_URL && 'MONGODB_URL not set' },
  async (t) => {
    const database = `rate_${Date.now()}_${process.pid}`;
    const storeConfig = { type: 'mongodb' as const, url: process.env.MONGODB_URL!, database };
    const upstream = await startSandbox();
    const one = await startService({
      upstream,
      config: { store: storeConfig },
      opco: { rateLimit: { limit: LIMIT, windowMs: WINDOW_MS } },
    });
    const two = await startService({
      upstream,
      config: { store: storeConfig },
      opco: { rateLimit: { limit: LIMIT, windowMs: WINDOW_MS } },
    });
    t.teardown(async () => {
      await one.close();
      await two.close();
      await upstream.close();
    });
    const statuses = await hammer([one, two], 5000);
    const arrivals = upstream.received
      .filter((r) => r.path === '/v2/dossiers/etats')
      .map((r) => (r as { at?: number }).at ?? 0);
    t.equal(statuses.filter((s) => s === 200).length, arrivals.length);
    t.ok(statuses.includes(429));
    t.ok(maxInWindow(arrivals, WINDOW_MS) <= LIMIT, `max ${maxInWindow(arrivals, WINDOW_MS)} calls in any window`);
  },
);
