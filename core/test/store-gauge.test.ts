// An age gauge read from the store (store-gauge.ts): scrapes share one read, the next read waits
// 20 times what the last one cost (1 s to 60 s), the age grows between reads, a failed read keeps
// the last moment, a hung one delays a scrape 2 s at most and is given up after 60 s. The read
// is a function the test answers by hand; time is a frozen TestClock, never slept.
import t from 'tap';
import { STORE_GAUGE, StoreAge, TestClock } from '../src/application.js';

/** A read the test answers: each call waits until `answer` or `fail`. */
function handRead() {
  const calls: Array<{ resolve: (since: Date | null) => void; reject: (err: Error) => void }> = [];
  const read = () => new Promise<Date | null>((resolve, reject) => calls.push({ resolve, reject }));
  return {
    read,
    calls,
    answer: (since: Date | null) => calls.at(-1)!.resolve(since),
    fail: () => calls.at(-1)!.reject(new Error('store down')),
  };
}

/** Lets promise callbacks run (the clock is frozen: nothing else moves). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function setUp() {
  const clock = new TestClock({ frozen: true });
  const store = handRead();
  const age = new StoreAge(clock, store.read);
  /** A scrape, once its read (if it makes one) has gone out: `pending` is what it answers. */
  const scrape = async () => {
    const pending = age.seconds();
    await settle();
    return { pending };
  };
  return { clock, store, age, scrape };
}

t.test(
  'a cheap read: scrapes within a second share it, the next second reads again, the age grows in between',
  async (t) => {
    const { clock, store, age, scrape } = setUp();
    const first = await scrape();
    store.answer(new Date(clock.now() - 5000));
    t.equal(await first.pending, 5, 'the age of the moment read');
    await clock.advance(999);
    t.equal(await age.seconds(), 5.999, 'counted from the same moment 999 ms later');
    t.equal(store.calls.length, 1, 'without a second read');
    await clock.advance(1);
    const second = await scrape();
    t.equal(store.calls.length, 2, 'a second after the first read, the next scrape reads again');
    store.answer(null);
    t.equal(await second.pending, 0, 'nothing waits: 0');
  },
);

t.test('a slow read pushes the next one back by 20 times its cost, at most 60 s', async (t) => {
  const { clock, store, age, scrape } = setUp();
  const first = await scrape();
  await clock.advance(500);
  store.answer(new Date(clock.now() - 60_000));
  t.equal(await first.pending, 60, "the read answered within the scrape's bound");
  await clock.advance(9_499);
  t.equal(await age.seconds(), 69.499, 'the age still grows from the last moment');
  t.equal(store.calls.length, 1, '1 ms before then, no second read');
  await clock.advance(1);
  await scrape();
  t.equal(store.calls.length, 2, '10 s after its start, the next scrape reads again');
  await clock.advance(5_000);
  store.answer(null);
  await settle();
  await clock.advance(STORE_GAUGE.MAX_EVERY_MS - 5_000 - 1);
  t.equal(await age.seconds(), 0, 'a 5 s read: its answer stands...');
  t.equal(store.calls.length, 2, '...for 60 s at most, not 100 s: no read yet');
  await clock.advance(1);
  await scrape();
  t.equal(store.calls.length, 3, '60 s after its start, another read');
});

t.test('a failed read keeps the last moment; a hung one answers in 2 s and is given up after 60 s', async (t) => {
  const { clock, store, age, scrape } = setUp();
  const none = await scrape();
  store.fail();
  t.equal(await none.pending, undefined, 'no value before any read answered: the gauge keeps its own');
  await clock.advance(1000);
  const first = await scrape();
  store.answer(new Date(clock.now() - 1000));
  t.equal(await first.pending, 1);
  await clock.advance(1000);
  const failed = await scrape();
  store.fail();
  t.equal(await failed.pending, 2, 'a failed read: the age from the last moment read');

  await clock.advance(1000);
  let answered: number | undefined | 'waiting' = 'waiting';
  const hung = age.seconds().then((seconds) => (answered = seconds));
  await settle();
  t.equal(store.calls.length, 4, 'the read is sent and never answers');
  await clock.advance(STORE_GAUGE.WAIT_MS - 1);
  t.equal(answered, 'waiting', 'the scrape waits for it...');
  await clock.advance(1);
  await hung;
  t.equal(answered, 5, '...2 s at most, then answers the age from the last moment');
  await clock.advance(STORE_GAUGE.MAX_EVERY_MS - STORE_GAUGE.WAIT_MS - 1);
  const shared = await scrape();
  t.equal(store.calls.length, 4, 'scrapes meanwhile share the hung read, piling none on the store');
  await clock.advance(STORE_GAUGE.WAIT_MS);
  await shared.pending;
  const retried = await scrape();
  t.equal(store.calls.length, 5, 'once 60 s have passed since the hung read began, the next scrape sends another');
  store.answer(null);
  t.equal(await retried.pending, 0);
});
