// The local bucket's unproven slice (issue 27): calls of tenants whose key the upstream has not
// accepted yet share `unprovenLimit` calls of each window; their waiting asks never hold back a
// proven tenant's; D11's order (priority, then tenants in turn) is kept across both.
import t from 'tap';
import { LocalBucket, TestClock, type BucketAsk } from '../src/application.js';

const W = 1000;

function setup(limit: number, unprovenLimit: number) {
  // Frozen: the bucket's wake-ups ring only when the test advances past them.
  const clock = new TestClock({ frozen: true });
  const bucket = new LocalBucket(limit, W, clock, undefined, unprovenLimit);
  const granted: Array<{ name: string; release: () => void }> = [];
  const ask = (name: string, fields: Partial<BucketAsk> = {}) =>
    void bucket.acquire({ priority: 5, tenant: name, ...fields }).then((release) => granted.push({ name, release }));
  const names = () => granted.map((g) => g.name);
  return { clock, bucket, granted, ask, names };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

t.test('a flood of unproven asks gets at most the slice of each window; proven asks get the rest', async (t) => {
  const { clock, bucket, granted, ask } = setup(10, 2);
  for (let i = 0; i < 50; i++) ask(`stranger-${i}`, { proven: false });
  for (let i = 0; i < 30; i++) ask(`cfa-${i % 3}`, { proven: true });
  const perWindow: Array<{ unproven: number; proven: number }> = [];
  for (let window = 0; window < 4; window++) {
    await settle();
    const these = granted.splice(0);
    perWindow.push({
      unproven: these.filter((g) => g.name.startsWith('stranger')).length,
      proven: these.filter((g) => g.name.startsWith('cfa')).length,
    });
    for (const call of these) call.release();
    await clock.advance(W);
  }
  t.same(
    perWindow,
    [
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 6 },
    ],
    'the slice each window, the whole rest to proven tenants; once they are served, the window is not filled by strangers',
  );
  await settle();
  t.equal(granted.length, 2, 'the fifth window: the slice again, nobody proven is left');
  t.equal(bucket.unprovenWaiters(), 40);
  t.equal(bucket.waiters(), 40);
  t.equal(bucket.unprovenUsed(), 2);
  t.equal(bucket.used(), 2);
});

t.test('a proven ask queued behind unproven asks blocked on the slice is served at once', async (t) => {
  const { bucket, ask, names } = setup(10, 1);
  ask('stranger-a', { proven: false, priority: 1 });
  ask('stranger-b', { proven: false, priority: 1 });
  ask('stranger-c', { proven: false, priority: 1 });
  await settle();
  t.same(names(), ['stranger-a'], 'the slice of one is taken');
  ask('cfa', { proven: true, priority: 10 });
  await settle();
  t.same(names(), ['stranger-a', 'cfa'], 'served at once, though the strangers waited first and at a better priority');
  t.equal(bucket.unprovenWaiters(), 2);
});

t.test('while the slice has room, both lanes keep D11 order: priority, then tenants in turn', async (t) => {
  const { clock, granted, ask, names } = setup(1, 1);
  ask('first', { proven: true });
  ask('u-sync-1', { proven: false, priority: 10, tenant: 'u' });
  ask('u-sync-2', { proven: false, priority: 10, tenant: 'u' });
  ask('p-sync-1', { proven: true, priority: 10, tenant: 'p' });
  ask('p-sync-2', { proven: true, priority: 10, tenant: 'p' });
  ask('q-sync-1', { proven: true, priority: 10, tenant: 'q' });
  ask('v-client', { proven: false, priority: 1, tenant: 'v' });
  await settle();
  // One call per window: each ends at once, and the next is served when it leaves the window.
  for (let i = 0; i < 6; i++) {
    granted.at(-1)!.release();
    await clock.advance(W);
  }
  t.same(
    names(),
    ['first', 'v-client', 'u-sync-1', 'p-sync-1', 'q-sync-1', 'u-sync-2', 'p-sync-2'],
    'as one FairQueue would: the unproven tenant u takes its turns among the proven p and q',
  );
});

t.test('an ask that does not say is proven: buckets without a slice behave as before', async (t) => {
  const { bucket, ask, names } = setup(3, 1);
  ask('a');
  ask('b');
  ask('c');
  await settle();
  t.same(names(), ['a', 'b', 'c'], 'three asks without `proven` take the whole budget, not the slice of one');
  t.equal(bucket.unprovenUsed(), 0);
  const plain = new LocalBucket(2, W, new TestClock({ frozen: true }));
  const got: string[] = [];
  for (const name of ['x', 'y'])
    void plain.acquire({ priority: 5, tenant: name, proven: false }).then(() => got.push(name));
  await settle();
  t.same(got, ['x', 'y'], 'no unprovenLimit given: the whole limit');
});

t.test('the slice counts unproven calls a window after they end, and a new slice applies at once', async (t) => {
  const { clock, bucket, granted, ask, names } = setup(5, 1);
  ask('s1', { proven: false });
  ask('s2', { proven: false });
  await settle();
  t.same(names(), ['s1']);
  granted[0].release();
  await clock.advance(W - 1);
  t.same(names(), ['s1'], 'the ended call still counts inside the window');
  await clock.advance(1);
  t.same(names(), ['s1', 's2'], 'served once it left the window');
  ask('s3', { proven: false });
  ask('s4', { proven: false });
  await settle();
  t.same(names(), ['s1', 's2']);
  bucket.setLimit(5, W, 3);
  await settle();
  t.same(names(), ['s1', 's2', 's3', 's4'], 'a raised slice serves the waiting asks at once');
});
