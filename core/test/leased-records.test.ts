// The durable-work kit's leases (BullMQ's LockManager): one holder at a time, takeover once a
// lease lapses, writes only under the lease, retries not taken early, lost work found by the
// sweep. Time is moved with a TestClock, never slept.
import t, { type Test } from 'tap';
import {
  createEmbeddedStore,
  LeasedRecords,
  TestClock,
  unleased,
  type Leased,
  type Store,
} from '../src/application.js';

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
    collection.insertOne({
      _id: id,
      state: 'open',
      leaseOwner: null,
      leaseUntil: null,
      nextAttemptAt: clock.date(),
      ...changes,
    });
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
  await add('held', {
    nextAttemptAt: new Date(clock.now() - 120_000),
    leaseOwner: 'x',
    leaseUntil: new Date(clock.now() + 60_000),
  });
  await add('later', { nextAttemptAt: new Date(clock.now() + 60_000) });
  await add('ended', { state: 'done', nextAttemptAt: new Date(clock.now() - 120_000) });
  t.same(
    (await leases.overdue({ state: 'open' }, new Date(clock.now() - 60_000))).map((w) => w._id),
    ['stuck'],
  );
  t.same(
    (await leases.overdue({ state: 'open' }, new Date(8.64e15))).map((w) => w._id).sort(),
    ['fresh', 'later', 'stuck'],
    'due before the end of time: everything not held',
  );
});

t.test('overdue with a $in: the records matching any value, by due date, within the limit', async (t) => {
  const { clock, leases, add } = await setUp(t, { frozen: true });
  const due = (agoMs: number) => ({ nextAttemptAt: new Date(clock.now() - agoMs) });
  await add('open-late', due(300_000));
  await add('done-later', { state: 'done', ...due(200_000) });
  await add('open-less-late', due(100_000));
  await add('open-fresh');
  const both = { state: { $in: ['open', 'done'] } };
  t.same(
    (await leases.overdue(both, new Date(clock.now() - 60_000))).map((w) => w._id),
    ['open-late', 'done-later', 'open-less-late'],
    'both states, most overdue first',
  );
  t.same(
    (await leases.overdue(both, new Date(clock.now() - 60_000), 2)).map((w) => w._id),
    ['open-late', 'done-later'],
    'the limit holds over the merged list',
  );
  t.equal((await leases.dueSince(both))?.getTime(), clock.now() - 300_000, 'due since the most overdue of either');
  t.equal(await leases.dueSince({ state: 'gone' }), null, 'null when none waits');
});

t.test('a claim filter on the lease fields themselves still takes only an unheld match', async (t) => {
  const { collection, leases, add } = await setUp(t);
  await add('a', { n: 3 });
  await add('b', { n: 7 });
  await add('c', { n: 3, leaseOwner: 'x', leaseUntil: new Date(Date.now() + 60_000) });
  const claimed = await leases.claim({ n: 3, $or: [{ leaseOwner: 'x' }, { leaseOwner: null }] }, 1000);
  t.equal(claimed?.record._id, 'a', 'the unheld match, though the filter has an $or of its own');
  t.equal((await collection.findOne({ _id: 'c' }))!.leaseOwner, 'x', 'the held one untouched');
});

t.test('unleased: the fields a new record is inserted with, nobody holding it', async (t) => {
  const at = new Date(5000);
  t.same(unleased(at), { leaseOwner: null, leaseUntil: null, nextAttemptAt: at });
  t.same(unleased(), { leaseOwner: null, leaseUntil: null });
});

t.test('release with unset; revoke ends the work whoever holds it, and the holder can no longer write', async (t) => {
  const { leases, add, collection } = await setUp(t);
  await add('r', { n: 1 });
  const first = (await leases.claim({ _id: 'r' }, 10_000))!;
  t.equal(
    (await leases.release('r', first.token, { state: 'done' }, { unset: ['n'] }))!.n,
    undefined,
    'n removed in the releasing write',
  );
  t.equal(await leases.release('r', first.token), null, 'a second release finds nothing');
  await collection.updateMany({ _id: 'r' }, { $set: { state: 'open' } });
  const second = (await leases.claim({ _id: 'r' }, 10_000))!;
  t.equal(
    await leases.revoke({ _id: 'r', state: 'done' }, { n: 9 }),
    null,
    'nothing revoked where the filter does not match',
  );
  const revoked = (await leases.revoke({ _id: 'r', state: 'open' }, { state: 'done' }, { unset: ['n'] }))!;
  t.equal(revoked.state, 'done');
  t.equal(revoked.leaseOwner, null, 'the lease is gone');
  t.equal(revoked.leaseUntil, null);
  await t.rejects(leases.update('r', second.token, { n: 5 }), { name: 'LeaseLost' }, 'the former holder cannot write');
  t.equal(await leases.release('r', second.token, { state: 'open' }), null, 'nor release');
  t.equal((await collection.findOne({ _id: 'r' }))!.state, 'done');
});

t.test(
  'unclaimed: gone and finished are acknowledged, a held record refuses redelivery only, an unheld one is queued for when due',
  async (t) => {
    const { clock, leases, add } = await setUp(t, { frozen: true });
    const requeued: number[] = [];
    const ended: string[] = [];
    const how = {
      finished: (w: Work) => w.state === 'done',
      ended: async (w: Work) => void ended.push(w._id),
      requeue: async (delayMs: number) => void requeued.push(delayMs),
    };
    await leases.unclaimed('missing', true, how);
    await add('done', { state: 'done' });
    await leases.unclaimed('done', true, how);
    t.same(ended, ['done'], 'a finished record is told to `ended`');
    await add('held');
    const claimed = (await leases.claim({ _id: 'held' }, 10_000))!;
    await leases.unclaimed('held', false, how);
    await t.rejects(leases.unclaimed('held', true, how), { name: 'LeaseHeld' }, 'redelivered while held: handed back');
    t.same(requeued, [], 'nothing queued again so far');
    await leases.release('held', claimed.token, { nextAttemptAt: new Date(clock.now() + 4000) });
    await leases.unclaimed('held', true, how);
    await add('due', { nextAttemptAt: new Date(clock.now() - 1000) });
    await leases.unclaimed('due', false, how);
    await clock.advance(10_001);
    await add('lapsed', {
      leaseOwner: 'x',
      leaseUntil: new Date(clock.now() - 1),
      nextAttemptAt: new Date(clock.now() + 2000),
    });
    await leases.unclaimed('lapsed', true, how);
    t.same(requeued, [4000, 0, 2000], 'early: in the time left; due: at once; a lapsed lease holds nothing');
    t.same(ended, ['done']);
  },
);

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
