// D11, D12: never more than `limit` calls per window; background work leaves a reserve to
// client requests and waits instead of being refused.
import t from 'tap';
import {
  createEmbeddedStore,
  UpstreamBudget,
  PRIORITY,
  systemClock,
  TestClock,
  type Opco,
} from '../src/application.js';

const opco = (limit: number, windowMs: number) =>
  ({ id: `o${limit}-${windowMs}-${Math.random()}`, rateLimit: { limit, windowMs } }) as Opco;

t.test('client requests: exactly limit per window, then RATE_LIMITED with Retry-After', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  // Frozen: Retry-After is rounded up from 3060 ms after the claims, so on a flowing clock a
  // loaded machine passing 60 ms between the claims and the refusal would make it 3.
  const budget = new UpstreamBudget(store, new TestClock({ frozen: true }));
  const o = opco(5, 3000);
  const leases = await Promise.all(Array.from({ length: 8 }, () => budget.acquire(o).catch((err) => err)));
  t.equal(leases.filter((l) => !(l instanceof Error)).length, 5);
  const refused = leases.find((l) => l instanceof Error) as unknown as {
    code: string;
    headers: Record<string, string>;
  };
  t.equal(refused.code, 'RATE_LIMITED');
  t.equal(
    refused.headers['Retry-After'],
    '4',
    'the window (3 s) after the claims, stamped 60 ms ahead for the calls (2%), rounded up',
  );
});

t.test('a spent budget refuses clients without a store round trip until its first slot frees', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const budget = new UpstreamBudget(store, clock);
  const other = new UpstreamBudget(store, clock); // another instance on the same store
  const o = opco(50, 10_000); // allowance: 2% of the window = 200 ms
  for (let i = 0; i < 50; i++) await (i % 2 ? budget : other).acquire(o);
  const slots = store.collection('upstream_budget');
  let reads = 0;
  for (const method of ['find', 'findOneAndUpdate'] as const) {
    const original = slots[method].bind(slots) as (...args: unknown[]) => Promise<unknown>;
    (slots as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => (reads++, original(...args));
  }
  const refusal = () =>
    budget.acquire(o).then(
      () => 'claimed',
      (err: { code: string; headers: Record<string, string> }) => `${err.code} ${err.headers['Retry-After']}`,
    );
  t.equal(await refusal(), 'RATE_LIMITED 11', 'the first refusal reads the slots');
  t.ok(reads > 0);
  reads = 0;
  for (let i = 0; i < 100; i++) t.equal(await refusal(), 'RATE_LIMITED 11');
  // Closer to it than two calls' spacing (400 ms), a client read would wait for the slot.
  await clock.advance(10_200 - 401);
  t.equal(await refusal(), 'RATE_LIMITED 1', 'until the first slot is about to leave the window');
  t.equal(reads, 0, 'none of them touched the store');
  await clock.advance(401);
  t.equal(await refusal(), 'claimed', 'the moment it leaves, the slot is claimed');
  t.ok(reads > 0);
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

t.test(
  'a slot is free one window after the call ended as the upstream may count it, whether the call was fast or slow',
  async (t) => {
    const store = await createEmbeddedStore({});
    t.teardown(() => store.close());
    const clock = new TestClock({ frozen: true });
    const budget = new UpstreamBudget(store, clock);
    const o = opco(1, 10_000); // allowance: 2% of the window = 200 ms
    const writes: string[] = [];
    const slots = store.collection('upstream_budget');
    for (const method of ['findOneAndUpdate', 'updateMany'] as const) {
      const original = slots[method].bind(slots) as (...args: unknown[]) => Promise<unknown>;
      (slots as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => (
        writes.push(method),
        original(...args)
      );
    }

    // A fast call (50 ms): its claim stamped the slot 200 ms ahead, so its release writes nothing.
    const fast = await budget.acquire(o);
    await clock.advance(50);
    writes.length = 0;
    await fast.release();
    t.same(writes, [], 'a call ended within the allowance costs no second write');
    await clock.advance(10_000 - 50 + 199);
    t.equal(await budget.tryAcquire(o), null, 'not free before claim + allowance + window');
    await clock.advance(1);
    const slow = await budget.tryAcquire(o);
    t.ok(slow, 'free once claim + allowance + window has passed');

    // A slow call (3 s): its release stamps the slot with its end.
    await clock.advance(3000);
    writes.length = 0;
    await slow!.release();
    t.same(writes, ['updateMany'], 'a call that outlasted the allowance stamps its end');
    await clock.advance(10_000 - 1);
    t.equal(await budget.tryAcquire(o), null, 'not free before end + window');
    await clock.advance(1);
    t.ok(await budget.tryAcquire(o), 'free one window after the slow call ended');
  },
);

t.test(
  'two first claims at once (prefetch > 1), answered out of order: every later claim is one round trip',
  async (t) => {
    const store = await createEmbeddedStore({});
    t.teardown(() => store.close());
    const budget = new UpstreamBudget(store, new TestClock({ frozen: true }));
    const o = opco(10, 60_000);
    const slots = store.collection('upstream_budget');
    const original = slots.findOneAndUpdate.bind(slots) as (
      filter: Record<string, unknown>,
      ...rest: unknown[]
    ) => Promise<unknown>;
    let claims = 0;
    // The first claim's answer comes back only after the second's (a busy store: CI under load).
    let answerFirst!: () => void;
    const secondAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
    (slots as unknown as Record<string, unknown>).findOneAndUpdate = async (
      filter: Record<string, unknown>,
      ...rest: unknown[]
    ) => {
      if (!('usedAt' in filter)) return original(filter, ...rest); // the slots being made
      const claim = ++claims;
      const slot = await original(filter, ...rest);
      if (claim === 1) await secondAnswered;
      if (claim === 2) answerFirst();
      return slot;
    };

    await Promise.all([budget.acquire(o), budget.acquire(o)]);
    t.equal(claims, 2, 'each first claim searched once');
    claims = 0;
    for (let i = 0; i < 6; i++) await (await budget.acquire(o)).release();
    t.equal(claims, 6, 'then one claim per call: the rotation never guesses the slot the other first claim took');
  },
);

t.test('unproven tenants share the last slots only; proven ones may take every slot (issue 27)', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const budget = new UpstreamBudget(store, new TestClock({ frozen: true }));
  const o = opco(10, 60_000);
  const unproven = { proven: false, unprovenLimit: 2 };
  const strangers = await Promise.all(Array.from({ length: 6 }, () => budget.tryAcquire(o, PRIORITY.client, unproven)));
  t.equal(strangers.filter(Boolean).length, 2, 'a flood of unproven calls gets the slice and no more');
  const refused = await budget
    .acquire(o, PRIORITY.client, unproven)
    .catch((err: unknown) => err as { code: string; message: string });
  t.match(refused, { code: 'RATE_LIMITED', message: /not accepted yet/ }, 'refused, saying which share is spent');
  let proven = 0;
  while (await budget.tryAcquire(o, PRIORITY.client)) proven++;
  t.equal(proven, 8, 'proven calls keep the rest');
  const standing = await budget.standing(o, 2);
  t.same({ used: standing.used, unprovenUsed: standing.unprovenUsed }, { used: 10, unprovenUsed: 2 });
});

t.test('a proven tenant may use the slice when it is free, and unproven calls then wait for it', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const budget = new UpstreamBudget(store, new TestClock({ frozen: true }));
  const o = opco(3, 60_000);
  for (let i = 0; i < 3; i++) t.ok(await budget.tryAcquire(o), `proven call ${i + 1}`);
  t.equal(await budget.tryAcquire(o, PRIORITY.client, { proven: false, unprovenLimit: 1 }), null);
  t.equal((await budget.standing(o, 1)).unprovenUsed, 0, 'the slot in the slice holds a proven call');
});
