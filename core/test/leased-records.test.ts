// The durable-work kit's leases (BullMQ's LockManager): one holder at a time, takeover once a
// lease lapses, writes only under the lease, retries not taken early, lost work found by the
// sweep. Time is moved with a TestClock, never slept.
import t, { type Test } from 'tap';
import { allOf, createEmbeddedStore, LeasedRecords, TestClock, type Leased, type Store } from '../src/index.js';

interface Work extends Leased {
  state: 'open' | 'done';
  n?: number;
}

async function setUp(t: Test, options: { frozen?: boolean } = {}) {
  const store: Store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock(options);
  const collection = store.collection<Work>('work');
  const leases = new LeasedRecords(collection, clock, 'w');
  const add = (id: string, changes: Partial<Work> = {}) =>
    collection.insertOne({ _id: id, state: 'open', leaseOwner: null, leaseUntil: null, nextAttemptAt: clock.date(), ...changes });
  return { clock, collection, leases, add };
}

t.test('one lease at a time; a lapsed lease is taken over and its old holder can no longer write', async (t) => {
  const { clock, leases, add } = await setUp(t);
  await add('a');
  const claims = await Promise.all([1, 2, 3].map(() => leases.claim({ _id: 'a' }, 1000)));
  t.equal(claims.filter(Boolean).length, 1, 'one winner');
  const first = claims.find(Boolean)!;
  t.equal(await leases.claim({ _id: 'a' }, 1000), null, 'a live lease cannot be claimed again, even by its holder');
  await clock.advance(1001);
  const second = await leases.claim({ _id: 'a' }, 1000);
  t.ok(second, 'taken over after the lease lapsed');
  t.not(second!.token, first.token, 'each claim has its own token');
  await t.rejects(leases.update('a', first.token, { n: 5 }), { name: 'LeaseLost' });
  t.equal((await leases.update('a', second!.token, { n: 6 })).n, 6);
});

t.test('a claim tells a takeover: a lapsed lease, or one given up with lapse(), not a released one', async (t) => {
  const { clock, leases, add } = await setUp(t);
  await add('c');
  const first = (await leases.claim({ _id: 'c' }, 1000))!;
  t.equal(first.takenOver, false, 'a fresh record');
  await clock.advance(1001);
  const second = (await leases.claim({ _id: 'c' }, 1000))!;
  t.equal(second.takenOver, true, 'its holder let the lease lapse');
  t.equal(second.record.leaseOwner, second.token, 'the record as claimed');
  await leases.lapse('c', first.token);
  t.equal(await leases.claim({ _id: 'c' }, 1000), null, 'lapse() by a former holder changes nothing');
  await leases.lapse('c', second.token);
  const third = (await leases.claim({ _id: 'c' }, 1000))!;
  t.equal(third.takenOver, true, 'given up with lapse(): claimable at once, as a takeover');
  await leases.release('c', third.token);
  t.equal((await leases.claim({ _id: 'c' }, 1000))!.takenOver, false, 'released: not a takeover');
});

t.test('release frees the record and schedules its next attempt in the same write', async (t) => {
  const { clock, leases, add } = await setUp(t);
  await add('b');
  const claimed = (await leases.claim({ _id: 'b' }, 10_000))!;
  await leases.release('b', claimed.token, { nextAttemptAt: new Date(clock.now() + 5000) });
  t.equal(await leases.claim({ _id: 'b' }, 10_000), null, 'not taken before its next attempt');
  await clock.advance(5000);
  t.ok(await leases.claim({ _id: 'b' }, 10_000), 'taken once due');
});

t.test('claim respects the caller filter, sets and increments in the claiming write', async (t) => {
  const { leases, add } = await setUp(t);
  await add('done', { state: 'done' });
  await add('open', { n: 1 });
  t.equal(await leases.claim({ _id: 'done', state: 'open' }, 1000), null);
  const claimed = await leases.claim({ state: 'open' }, 1000, { set: { state: 'open' }, inc: { n: 1 } });
  t.equal(claimed!.record.n, 2);
  t.match(claimed!.record.leaseOwner, /^w:/);
});

t.test('overdue finds unheld work due for longer than the grace, not fresh or held work', async (t) => {
  const { clock, leases, add } = await setUp(t);
  await add('stuck', { nextAttemptAt: new Date(clock.now() - 120_000) });
  await add('fresh');
  await add('held', { nextAttemptAt: new Date(clock.now() - 120_000), leaseOwner: 'x', leaseUntil: new Date(clock.now() + 60_000) });
  await add('later', { nextAttemptAt: new Date(clock.now() + 60_000) });
  await add('ended', { state: 'done', nextAttemptAt: new Date(clock.now() - 120_000) });
  t.same((await leases.overdue({ state: 'open' }, 60_000)).map((w) => w._id), ['stuck']);
  t.same((await leases.overdue({ state: 'open' }, -3_600_000)).map((w) => w._id).sort(), ['fresh', 'later', 'stuck'], 'a negative grace restores everything not held');
});

t.test('overdue with several filters: the records matching any, by due date, within the limit', async (t) => {
  const { clock, leases, add } = await setUp(t, { frozen: true });
  const due = (agoMs: number) => ({ nextAttemptAt: new Date(clock.now() - agoMs) });
  await add('open-late', due(300_000));
  await add('done-later', { state: 'done', ...due(200_000) });
  await add('open-less-late', due(100_000));
  await add('open-fresh');
  const both = [{ state: 'open' }, { state: 'done' }];
  t.same((await leases.overdue(both, 60_000)).map((w) => w._id), ['open-late', 'done-later', 'open-less-late'], 'both states, most overdue first');
  t.same((await leases.overdue(both, 60_000, 2)).map((w) => w._id), ['open-late', 'done-later'], 'the limit holds over the merged list');
  t.equal((await leases.dueSince(both))?.getTime(), clock.now() - 300_000, 'due since the most overdue of either');
  t.equal(await leases.dueSince([{ state: 'gone' }]), null, 'null when none waits');
});

t.test('allOf puts clauses side by side unless a field repeats; the matches are the same', async (t) => {
  const unheld = { $or: [{ leaseUntil: null }] };
  t.same(allOf({ status: 'pending' }, unheld, { nextAttemptAt: { $lte: 1 } }), { status: 'pending', $or: [{ leaseUntil: null }], nextAttemptAt: { $lte: 1 } });
  t.same(allOf({ $or: [{ a: 1 }] }, unheld), { $and: [{ $or: [{ a: 1 }] }, unheld] }, 'two $or stay apart');
  t.same(allOf({ n: { $gt: 1 } }, { n: { $lt: 5 } }), { $and: [{ n: { $gt: 1 } }, { n: { $lt: 5 } }] }, 'two conditions on one field stay apart');

  const { collection, leases, add } = await setUp(t);
  await add('a', { n: 3 });
  await add('b', { n: 7 });
  await add('c', { n: 3, leaseOwner: 'x', leaseUntil: new Date(Date.now() + 60_000) });
  t.same((await collection.find(allOf({ n: { $gt: 1 } }, { n: { $lt: 5 } }))).map((w) => w._id).sort(), ['a', 'c']);
  const claimed = await leases.claim({ n: 3 }, 1000);
  t.equal(claimed?.record._id, 'a', 'a claim with the filter side by side takes the unheld match');
});

t.test('hold renews the lease while the work runs, and stops renewing after', async (t) => {
  const { clock, collection, leases, add } = await setUp(t);
  await add('c');
  const claimed = (await leases.claim({ _id: 'c' }, 900))!;
  let until = 0;
  await leases.hold('c', claimed.token, 900, async () => {
    for (let i = 0; i < 5; i++) {
      await clock.advance(300);
      await new Promise((resolve) => setImmediate(resolve));
    }
    until = (await collection.findOne({ _id: 'c' }))!.leaseUntil!.getTime();
  });
  t.ok(until > clock.now() - 300, 'the lease was moved forward while working');
  t.equal(clock.pending(), 0, 'no renewal left scheduled');
});
