// D11, D12: never more than `limit` calls per window; background work leaves a reserve to
// client requests and waits instead of being refused.
import t from 'tap';
import { createEmbeddedStore, UpstreamBudget, PRIORITY, systemClock, type Opco } from '../src/index.js';

const opco = (limit: number, windowMs: number) => ({ id: `o${limit}-${windowMs}-${Math.random()}`, rateLimit: { limit, windowMs } }) as Opco;

t.test('client requests: exactly limit per window, then RATE_LIMITED with Retry-After', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const budget = new UpstreamBudget(store, systemClock);
  const o = opco(5, 3000);
  const leases = await Promise.all(Array.from({ length: 8 }, () => budget.acquire(o).catch((err) => err)));
  t.equal(leases.filter((l) => !(l instanceof Error)).length, 5);
  const refused = leases.find((l) => l instanceof Error) as unknown as { code: string; headers: Record<string, string> };
  t.equal(refused.code, 'RATE_LIMITED');
  t.equal(refused.headers['Retry-After'], '3');
});

t.test('background work leaves 10% of the budget to clients', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const budget = new UpstreamBudget(store, systemClock);
  const o = opco(10, 60_000);
  let background = 0;
  while (await budget.tryAcquire(o, PRIORITY.low)) background++;
  t.equal(background, 9, 'one slot of ten kept for clients');
  t.ok(await budget.tryAcquire(o, PRIORITY.client), 'a client still gets it');
  t.equal(await budget.tryAcquire(o, PRIORITY.client), null, 'and then the budget is spent');
});

t.test('background work waits for the window, and stops waiting when cancelled', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const budget = new UpstreamBudget(store, systemClock);
  const o = opco(2, 400);
  const started = Date.now();
  const leases = [];
  for (let i = 0; i < 4; i++) leases.push(await budget.acquireWaiting(o, PRIORITY.low));
  t.ok(leases.every(Boolean));
  t.ok(Date.now() - started >= 350, `the 3rd and 4th waited for the window (${Date.now() - started} ms)`);
  let cancel = false;
  setTimeout(() => (cancel = true), 50);
  t.equal(await budget.acquireWaiting(o, PRIORITY.low, () => cancel), null, 'cancelled while waiting');
});
