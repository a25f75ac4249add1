// The hub's leader lease (issue 31, failover) on a frozen TestClock: taken, renewed, lost when it
// cannot be renewed in time, lost at once when another hub holds it, released on close, and
// never held by two hubs at once, on the embedded store and, with MONGODB_URL, on the real
// MongoDB/FerretDB (whose findAndModify is not atomic by itself: drivers/mongodb document-locks.ts).
import t, { type Test } from 'tap';
import { createEmbeddedStore, type Store } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createStore as createMongoStore } from '@opco-proxy/driver-mongodb';
import { HubLeadership, leaseMargin } from '../src/index.js';
import { logInto } from './fixtures/hub-harness.js';

const LEASE_MS = 3000;
const RENEW_MS = 1000;
const MARGIN = leaseMargin(LEASE_MS);

/** A store whose every call fails while `down` is set: the hub cut off from it. */
function cuttable(store: Store): { store: Store; cut: (down: boolean) => void } {
  let down = false;
  const wrapped = Object.assign(Object.create(store) as Store, {
    collection(name: string) {
      const collection = store.collection(name);
      return new Proxy(collection, {
        get(target, prop: string | symbol) {
          const value = Reflect.get(target, prop) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) =>
            down
              ? Promise.reject(new Error('store unreachable'))
              : (value as (...a: unknown[]) => unknown).apply(target, args);
        },
      });
    },
  });
  return { store: wrapped, cut: (value) => void (down = value) };
}

interface Contender {
  leadership: HubLeadership;
  cut(down: boolean): void;
  led: number;
  steppedDown: string[];
}

type Scene = {
  clock: TestClock;
  contender(id: string, lead?: () => Promise<void>): Contender;
  settle(): Promise<void>;
  leaders(): string[];
};

function leaseSuite(t: Test, openStore: () => Promise<Store>): void {
  async function scene(t: Test): Promise<Scene> {
    const clock = new TestClock({ frozen: true });
    const store = await openStore();
    await store.collection('hub_leader').deleteMany({});
    const all: Contender[] = [];
    t.teardown(async () => {
      for (const c of all) {
        c.cut(false);
        await c.leadership.close();
      }
      await store.collection('hub_leader').deleteMany({});
      await store.close();
    });
    return {
      clock,
      contender(id, lead = () => Promise.resolve()) {
        const { store: own, cut } = cuttable(store);
        const c: Contender = {
          cut: (down) => cut(down),
          led: 0,
          steppedDown: [],
          leadership: undefined as unknown as HubLeadership,
        };
        c.leadership = new HubLeadership({
          store: own,
          clock,
          log: logInto([]),
          id,
          url: `ws://${id}:8090`,
          leaseMs: LEASE_MS,
          renewMs: RENEW_MS,
          lead: async () => {
            c.led += 1;
            await lead();
          },
          stepDown: (reason) => void c.steppedDown.push(reason),
        });
        all.push(c);
        return c;
      },
      async settle() {
        await Promise.all(all.map((c) => c.leadership.idle()));
      },
      leaders: () => all.filter((c) => c.leadership.granting()).map((c) => c.leadership.view().id),
    };
  }

  /** Moves the frozen clock in steps, checking after each that at most one hub grants. */
  async function run(t: Test, s: Scene, ms: number, step = 100): Promise<void> {
    for (let elapsed = 0; elapsed < ms; elapsed += step) {
      await s.clock.advance(step);
      await s.settle();
      if (s.leaders().length > 1) t.fail(`two hubs grant at once: ${s.leaders().join(', ')}`);
    }
  }

  t.test('the first hub takes the lease and renews it; the second stands by, naming it', async (t) => {
    const s = await scene(t);
    const { a, b } = await leaderAndStandby(s);
    t.equal(a.led, 1, 'a leads');
    t.match(a.leadership.view(), { role: 'leader', id: 'hub-a', leader: { id: 'hub-a', url: 'ws://hub-a:8090' } });
    t.match(b.leadership.view(), {
      role: 'standby',
      id: 'hub-b',
      leader: { id: 'hub-a', url: 'ws://hub-a:8090', expiresAt: String },
    });
    t.same(s.leaders(), ['hub-a']);
    await run(t, s, 5 * LEASE_MS);
    t.same(s.leaders(), ['hub-a'], 'renewed for five leases: still a alone');
    t.equal(b.led, 0, 'b never took it');
    t.same(a.steppedDown, []);
  });

  /** hub-a started first (it leads), then hub-b (it stands by). */
  async function leaderAndStandby(s: Scene) {
    const a = s.contender('hub-a');
    const b = s.contender('hub-b');
    await a.leadership.start();
    await b.leadership.start();
    return { a, b };
  }

  /** hub-a started with a lead() that loads until `loaded()`; resolves once the lease is written and lead() called. */
  async function slowLeader(s: Scene) {
    let loaded!: () => void;
    let leading!: () => void;
    const entered = new Promise<void>((resolve) => (leading = resolve));
    const a = s.contender('hub-a', () => {
      leading();
      return new Promise<void>((resolve) => (loaded = resolve));
    });
    const started = a.leadership.start();
    await entered;
    return { a, loaded, started };
  }

  t.test('nothing is granted before lead() has loaded what it needs', async (t) => {
    const s = await scene(t);
    const { a, loaded, started } = await slowLeader(s);
    t.equal(a.leadership.view().role, 'leader', 'the lease is taken');
    t.notOk(a.leadership.granting(), 'but nothing is granted while the journal loads');
    loaded();
    await started;
    t.ok(a.leadership.granting());
  });

  t.test('a lease that runs out while lead() loads: what it set up is ended again, nothing granted', async (t) => {
    const s = await scene(t);
    const { a, loaded, started } = await slowLeader(s);
    a.cut(true);
    await s.clock.advance(LEASE_MS);
    t.same(a.steppedDown, ['the lease could not be renewed in time']);
    loaded();
    await started;
    t.same(a.steppedDown, [
      'the lease could not be renewed in time',
      'the lease ran out while this hub started leading',
    ]);
    t.notOk(a.leadership.granting());
    t.equal(a.leadership.view().role, 'standby');
  });

  t.test(
    'a leader cut off from the store stops granting before its lease ends; the standby takes it once it has',
    async (t) => {
      const s = await scene(t);
      const { a, b } = await leaderAndStandby(s);
      const expiresAt = Date.parse(b.leadership.view().leader!.expiresAt!);
      a.cut(true);
      // Until the lease's end minus the margin, a still grants: its renewals fail, its lease holds.
      await run(t, s, expiresAt - MARGIN - s.clock.now() - 100);
      t.same(s.leaders(), ['hub-a'], 'a grants while its lease holds');
      await run(t, s, 200);
      t.same(s.leaders(), [], 'a stepped down before the lease ended; b waits for its end');
      t.same(a.steppedDown, ['the lease could not be renewed in time']);
      t.equal(b.led, 0);
      await run(t, s, expiresAt - s.clock.now() + 100);
      t.same(s.leaders(), ['hub-b'], 'b took the lease just after it ended');
      t.ok(s.clock.now() - expiresAt <= 200, `b led ${s.clock.now() - expiresAt} ms after the lease's end`);
      t.match(b.leadership.view(), { role: 'leader', leader: { id: 'hub-b' } });
      a.cut(false);
      await run(t, s, 3 * LEASE_MS);
      t.same(s.leaders(), ['hub-b'], 'a back on the store stands by');
      t.match(a.leadership.view(), { role: 'standby', leader: { id: 'hub-b', url: 'ws://hub-b:8090' } });
    },
  );

  t.test('a leader whose lease another hub holds steps down at its next renewal', async (t) => {
    const s = await scene(t);
    const a = s.contender('hub-a');
    await a.leadership.start();
    // What a takeover looks like from a's side, had a paused for longer than its lease.
    await (
      await openStore().then((store) => {
        t.teardown(() => store.close());
        return store;
      })
    )
      .collection('hub_leader')
      .updateMany(
        { _id: 'hub-leader' },
        { $set: { leaseOwner: 'hub-z:1', holderId: 'hub-z', leaseUntil: new Date(s.clock.now() + LEASE_MS) } },
      );
    await run(t, s, RENEW_MS);
    t.same(a.steppedDown, ['another hub holds the lease']);
    t.notOk(a.leadership.granting());
    await run(t, s, RENEW_MS);
    t.match(a.leadership.view(), { role: 'standby', leader: { id: 'hub-z' } });
  });

  t.test('a hub that stops releases the lease: the standby takes it at its next try', async (t) => {
    const s = await scene(t);
    const { a } = await leaderAndStandby(s);
    await a.leadership.close();
    t.same(a.steppedDown, ['hub stopping']);
    await run(t, s, RENEW_MS + 100);
    t.same(s.leaders(), ['hub-b'], 'well before the old lease would have ended');
  });

  t.test('contenders racing for a free or lapsed lease: exactly one wins', async (t) => {
    const s = await scene(t);
    const hubs = Array.from({ length: 5 }, (_, i) => s.contender(`hub-${i}`));
    await Promise.all(hubs.map((h) => h.leadership.start()));
    t.equal(s.leaders().length, 1, `one leader of five starting together (${s.leaders().join(', ')})`);
    const first = hubs.find((h) => h.leadership.granting())!;
    first.cut(true);
    await run(t, s, 2 * LEASE_MS);
    t.equal(s.leaders().length, 1, `one new leader once its lease lapsed (${s.leaders().join(', ')})`);
    t.notOk(first.leadership.granting());
    t.equal(
      hubs.reduce((sum, h) => sum + h.led, 0),
      2,
      'two terms in all',
    );
  });
}

t.test('on the embedded store', async (t) => {
  const store = await createEmbeddedStore();
  // One store shared by every contender of a case, as a MongoDB database is; closed once at the end.
  const shared = Object.assign(Object.create(store) as Store, { close: () => Promise.resolve() });
  t.teardown(() => store.close());
  leaseSuite(t, () => Promise.resolve(shared));
});

const url = process.env.MONGODB_URL;
t.test('on MongoDB', { skip: url ? false : 'needs MONGODB_URL' }, async (t) => {
  leaseSuite(t, () => createMongoStore({ url: url!, database: 'hub_lease_test' }));
});
