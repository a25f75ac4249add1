// Issue 38 (D11 without a hub): the store budget paces background work, keeps a tenth of the
// window free for other tenants' reads, and shares it fairly once another tenant is active.
import t, { type Test } from 'tap';
import { createEmbeddedStore, UpstreamBudget, PRIORITY, TestClock, type Opco } from '../src/application.js';

const PROVEN = { proven: true, unprovenLimit: 0 };
const opco = (limit: number, windowMs: number) => ({ id: `o${Math.random()}`, rateLimit: { limit, windowMs } }) as Opco;

async function scene(t: Test, limit: number, windowMs: number) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const budget = new UpstreamBudget(store, clock);
  const o = opco(limit, windowMs);
  const claim = async (tenant: string, n: number) => {
    for (let i = 0; i < n; i++) t.ok(await budget.tryAcquire(o, PRIORITY.client, PROVEN, tenant), `${tenant} claims`);
    // What an instance read of the window is kept for a call's spacing (at most 250 ms).
    await clock.advance(250);
  };
  return { clock, budget, o, claim };
}

t.test(
  "background calls are paced at the window's rate: one a spacing, a tenth of the window within a tenth of its time",
  async (t) => {
    const { clock, budget, o } = await scene(t, 100, 10_000); // a call per 100 ms, a burst of 10
    t.equal(budget.share.paceWait(o), 0, 'the first at once');
    const wait = budget.share.paceWait(o);
    t.ok(wait > 0 && wait <= 100, `then a wait of one spacing at most (${wait} ms)`);
    await clock.advance(100);
    t.equal(budget.share.paceWait(o), 0, 'one more a spacing later');
    t.ok(budget.share.paceWait(o) > 0);
    for (let i = 0; i < 10; i++)
      t.ok(await budget.tryAcquire(o, PRIORITY.normal, PROVEN, 'bulk'), 'claimed (by any instance)');
    await clock.advance(250);
    t.equal(await budget.share.turn(o, 'bulk'), 'now', 'the window read again: more than half free, no pacing asked');
    t.ok(
      budget.share.paceWait(o) > 0,
      'but had it been paced: ten calls within the last second are a burst, so it waits',
    );
    await clock.advance(1000);
    await budget.share.turn(o, 'bulk');
    t.equal(budget.share.paceWait(o), 0, 'a second later it may');
  },
);

t.test("two instances on one store pace their background calls together, not each at the window's rate", async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const o = opco(100, 10_000); // a call per 100 ms, a burst of 10
  const instances = [new UpstreamBudget(store, clock), new UpstreamBudget(store, clock)];
  // Half the window used: from here background calls are paced.
  for (let i = 0; i < 50; i++) t.ok(await instances[0].tryAcquire(o, PRIORITY.normal, PROVEN, 'bulk'));
  await clock.advance(1000);
  let claimed = 0;
  // Two seconds of both instances trying every 10 ms, as tryWaiting does.
  for (let ms = 0; ms < 2000; ms += 10) {
    for (const budget of instances) {
      const turn = await budget.share.turn(o, 'bulk');
      if (turn === 'wait' || (turn === 'paced' && budget.share.paceWait(o) > 0)) continue;
      if (await budget.tryAcquire(o, PRIORITY.normal, PROVEN, 'bulk')) claimed += 1;
    }
    await clock.advance(10);
  }
  t.ok(claimed <= 26, `${claimed} paced calls in 2 s: the window's rate (20), not twice that`);
  t.ok(claimed >= 15, `${claimed}: the pace is kept, not stopped`);
});

t.test("alone, a tenant's background work leaves the last tenth of the window free", async (t) => {
  const { budget, o, claim } = await scene(t, 10, 60_000);
  await claim('tenant-a', 4);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'now', 'more than half the window free: no pacing');
  await claim('tenant-a', 4);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'paced', '2 free of 10: above the headroom of 1, paced');
  await claim('tenant-a', 1);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'wait', 'the last slot is left to others');
  t.ok(await budget.acquire(o, PRIORITY.client, PROVEN, 'tenant-b'), "another tenant's read gets it at once");
});

t.test('with another tenant active, background work holds at most half the window', async (t) => {
  const { budget, o, claim } = await scene(t, 10, 60_000);
  await claim('tenant-a', 5);
  await claim('tenant-b', 1);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'wait', 'A holds half while B is active, though 4 are free');
  await claim('tenant-b', 3);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'wait', 'A holds its half');
  t.equal(await budget.share.turn(o, 'tenant-b'), 'paced', 'B is under its half');
});

t.test(
  "a tenant's concurrent steps cannot pass its half together: each turn is counted when it is given",
  async (t) => {
    const { budget, o, claim } = await scene(t, 10, 60_000);
    await claim('tenant-a', 4);
    await claim('tenant-b', 1);
    const turns = await Promise.all(Array.from({ length: 3 }, () => budget.share.turn(o, 'tenant-a')));
    t.same(
      turns.sort(),
      ['paced', 'wait', 'wait'],
      'one of three steps deciding at once takes the fifth slot, the others wait',
    );
  },
);

t.test('while another tenant is active, the half holds even when more than half the window is free', async (t) => {
  const { budget, o, claim } = await scene(t, 20, 60_000);
  await claim('tenant-b', 1);
  const turns: string[] = [];
  for (let i = 0; i < 12; i++) turns.push(await budget.share.turn(o, 'tenant-a'));
  t.same(
    turns.filter((turn) => turn !== 'wait').length,
    10,
    "A's turns stop at half the window, though 9 more slots are free",
  );
});

t.test("a read refused for budget is an ask: other tenants' background work yields to it", async (t) => {
  const { clock, budget, o, claim } = await scene(t, 10, 10_000);
  await claim('tenant-a', 10);
  const refused = await budget
    .acquire(o, PRIORITY.client, PROVEN, 'tenant-b')
    .catch((err: unknown) => err as { code: string });
  t.match(refused, { code: 'RATE_LIMITED' }, "no slot frees within the client's wait: refused, and B's ask written");
  await clock.advance(9_000);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'wait', 'no slot free yet');
  await clock.advance(2_000);
  t.equal(await budget.share.turn(o, 'tenant-a'), 'now', 'the window has emptied: free slots for anyone');
  await claim('tenant-a', 9);
  await budget.share.asked(o, 'tenant-b');
  t.equal(await budget.share.turn(o, 'tenant-a'), 'wait', 'A at 9 of 10 while B asks: A keeps to its half');
  t.equal(await budget.share.turn(o, 'tenant-b'), 'paced', 'B may take the last slot');
  t.equal(await budget.share.sweep(), 0, 'an ask lives two windows');
  await clock.advance(21_000);
  t.equal(await budget.share.sweep(), 1, 'then it is swept');
});

t.test(
  'at a high limit the window is counted every 250 ms while it is calm, and at the spacing floor once it is not',
  async (t) => {
    const real = await createEmbeddedStore({});
    t.teardown(() => real.close());
    // The real store, with the counts made on the slots tallied.
    let counts = 0;
    const store = new Proxy(real, {
      get(target, key, receiver) {
        if (key !== 'collection') return Reflect.get(target, key, receiver) as unknown;
        return (name: string) => {
          const collection = target.collection(name);
          return new Proxy(collection, {
            get(inner, k, r) {
              if (k === 'count')
                return (...args: Parameters<typeof collection.count>) => ((counts += 1), inner.count(...args));
              const value = Reflect.get(inner, k, r) as unknown;
              return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(inner) : value;
            },
          });
        };
      },
    });
    const clock = new TestClock({ frozen: true });
    const budget = new UpstreamBudget(store, clock);
    const o = opco(5000, 1000); // a spacing of 0.2 ms: the floor of 25 ms applies
    const turnsOver = async (ms: number) => {
      const before = counts;
      const turns = new Set<string>();
      for (let at = 0; at < ms; at += 5) {
        turns.add(await budget.share.turn(o, 'bulk'));
        await clock.advance(5);
      }
      t.same([...turns], ['now'], 'every turn taken at once: the tenant is alone, the window more than half free');
      return counts - before;
    };
    await turnsOver(5);
    t.equal(
      await turnsOver(1000),
      4 * 3,
      'calm (nothing used): one read of the window and one of the tenant a 250 ms, three counts',
    );
    for (let i = 0; i < 2000; i++) await budget.tryAcquire(o, PRIORITY.normal, PROVEN, 'bulk');
    await clock.advance(250);
    // 750 ms: the claims leave the window a second after they were made.
    t.equal(
      await turnsOver(750),
      30 * 3,
      '2,000 of 5,000 used: 250 ms of calls could pass half the window, read every 25 ms',
    );
  },
);
