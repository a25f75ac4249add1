// The restart rule (D30) on a TestClock. What makes a window exact across a hub loss and restart:
// 1. an instance that loses its hub makes its first local call one window after the loss (and
//    after its own last granted call), then at most its share limit/expectedInstances per window;
// 2. a restarted hub restores the grants of its predecessor from the journal;
// 3. instances report, in their hello, what they spent while away and what is in flight;
// 4. for the first window after start, the hub keeps back one share per expected instance of a
//    fleetId that has not connected yet.
import t from 'tap';
import { createEmbeddedStore, type AdmissionRequest } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { LocalFallback, Rerouted, UsageLedger } from '@opco-proxy/plugin-hub';
import { GrantJournal, GrantScheduler, type IssuedGrant, type JournalGrant } from '../src/index.js';
import { maxInWindow, seeded } from './fixtures/windows.js';
import { journalInto, SimInstance, type SimWorld } from './fixtures/restart-sim.js';

const W = 1000;
const RL = { limit: 6, windowMs: W };

function asker(scheduler: GrantScheduler, granted: IssuedGrant[]) {
  let next = 0;
  return (instanceId: string, count = 1) => {
    for (let i = 0; i < count; i++) {
      scheduler.ask(
        'pub',
        {
          askId: `a${next++}`,
          instanceId,
          opcoId: 'op',
          method: 'GET',
          route: 'r',
          priority: 5,
          tenant: 'cfa',
          rateLimit: RL,
        },
        (g) => granted.push(g),
      );
    }
  };
}

t.test('for its first window a hub keeps back the share of each expected instance not connected yet', async (t) => {
  const clock = new TestClock();
  const hub = new GrantScheduler({ clock, opcos: { op: RL } });
  t.teardown(() => hub.close());
  const granted: IssuedGrant[] = [];
  const ask = asker(hub, granted);
  hub.connect('pub', 'a', { expectedInstances: 3, limits: {}, usage: [], complete: true });
  ask('a', 6);
  t.equal(granted.length, 2, 'limit 6, 3 expected, 2 missing: 2 x 2 kept back');
  t.match(hub.limits()[0], { reserved: 4, waiting: 4 });
  // b was spending its local share while away: 1 call ended 200 ms ago, 1 still in flight.
  hub.connect('pub', 'b', {
    expectedInstances: 3,
    limits: { op: RL },
    complete: true,
    usage: [
      { id: 'local-1', opcoId: 'op', startedAgoMs: 300, endedAgoMs: 200 },
      { id: 'local-2', opcoId: 'op', startedAgoMs: 100 },
    ],
  });
  t.equal(granted.length, 2, "b's 2 calls replace its reserve: 2 grants + 2 reported + 2 kept for c = 6");
  t.match(hub.limits()[0], { reserved: 2, occupied: 4 });
  await clock.advance(W + 10);
  t.equal(hub.limits()[0].reserved, 0, 'after the first window, c is taken for dead');
  t.equal(granted.length, 5, "b's ended call has left the window, then the reserve ended: 3 more grants, 6 in all");
  hub.done('pub', 'b', 'local-2', 'used');
  t.equal(hub.limits()[0].occupied, 6, 'a call reported in flight is ended by its done and counts for a window more');
});

t.test('the journal restores grants of the previous hub; a complete hello frees those never used', async (t) => {
  const clock = new TestClock();
  const now = clock.now();
  const grant = (id: string, instanceId: string): JournalGrant => ({
    id,
    fleetId: 'pub',
    opcoId: 'op',
    instanceId,
    issuedAt: now - 500,
    deadline: now + 29_500,
    rateLimit: RL,
  });
  const hub = new GrantScheduler({ clock, opcos: { op: RL }, startedAt: now - 10 * W });
  t.teardown(() => hub.close());
  hub.restore([grant('g1', 'a'), grant('g2', 'a'), grant('g3', 'a'), grant('g4', 'dead')]);
  t.equal(hub.limits()[0].occupied, 4, 'every journalled grant counts, whoever holds it');
  hub.connect('pub', 'a', {
    expectedInstances: 1,
    limits: {},
    complete: true,
    usage: [
      { id: 'g1', opcoId: 'op', startedAgoMs: 490, endedAgoMs: 400 },
      { id: 'g2', opcoId: 'op', startedAgoMs: 490 },
    ],
  });
  t.equal(hub.limits()[0].occupied, 3, 'g1 ended (counted a window more), g2 in flight, g3 never used: freed; g4 held');
  t.ok(hub.done('pub', 'a', 'g2', 'used'), 'the done of a grant of the previous hub reaches this one');
  t.notOk(hub.done('pub', 'a', 'g4', 'used'), "another instance's grant");
  await clock.advance(W);
  t.equal(hub.limits()[0].occupied, 1, 'only the dead instance’s grant is left, until its exp + window');
});

t.test('the journal keeps which grants went to unproven tenants, so a restarted hub counts its slice', async (t) => {
  const clock = new TestClock({ frozen: true });
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const journal = new GrantJournal(store, clock);
  t.teardown(() => journal.close());
  const hub1 = new GrantScheduler({
    clock,
    opcos: { op: { limit: 10, windowMs: W } },
    startedAt: clock.now() - 10 * W,
  });
  const granted: IssuedGrant[] = [];
  for (const proven of [false, true]) {
    hub1.ask(
      'pub',
      {
        askId: `a-${proven}`,
        instanceId: 'i',
        opcoId: 'op',
        method: 'GET',
        route: 'r',
        priority: 5,
        tenant: String(proven),
        rateLimit: { limit: 10, windowMs: W },
        proven,
      },
      (g) => granted.push(g),
    );
  }
  hub1.close();
  for (const grant of granted) await journal.record(grant);
  await journal.ended(granted[1].grantId, clock.now(), W, 'used');
  const loaded = await journal.load();
  const flags = (pairs: Array<[string, boolean]>) => Object.fromEntries(pairs);
  t.same(
    flags(loaded.map((g) => [g.id, g.unproven ?? false])),
    flags(granted.map((g) => [g.grantId, g.unproven])),
    'the flag survives the store',
  );
  const hub2 = new GrantScheduler({
    clock,
    opcos: { op: { limit: 10, windowMs: W } },
    startedAt: clock.now() - 10 * W,
  });
  t.teardown(() => hub2.close());
  hub2.restore(loaded);
  t.match(hub2.limits()[0], { occupied: 2, unproven: { limit: 1, occupied: 1 } });
});

t.test('an incomplete hello frees nothing it does not name', async (t) => {
  const clock = new TestClock();
  const hub = new GrantScheduler({ clock, opcos: { op: RL }, startedAt: clock.now() - 10 * W });
  t.teardown(() => hub.close());
  hub.restore([
    {
      id: 'g1',
      fleetId: 'pub',
      opcoId: 'op',
      instanceId: 'a',
      issuedAt: clock.now(),
      deadline: clock.now() + 30_000,
      rateLimit: RL,
    },
  ]);
  hub.connect('pub', 'a', { expectedInstances: 1, limits: {}, usage: [], complete: false });
  t.equal(hub.limits()[0].occupied, 1);
});

t.test('without the journal a restarted hub could double a window; with it, it does not', async (t) => {
  for (const withJournal of [false, true]) {
    const clock = new TestClock();
    const journal: JournalGrant[] = [];
    const old = new GrantScheduler({ clock, opcos: { op: RL }, observer: journalInto(journal) });
    const oldGranted: IssuedGrant[] = [];
    old.connect('pub', 'a', { expectedInstances: 3, limits: {}, usage: [], complete: true });
    old.connect('pub', 'b', { expectedInstances: 3, limits: {}, usage: [], complete: true });
    old.connect('pub', 'c', { expectedInstances: 3, limits: {}, usage: [], complete: true });
    asker(old, oldGranted)('a', 6);
    t.equal(oldGranted.length, 6, 'a busy instance took the whole budget just before the crash');
    old.close();
    await clock.advance(10);
    const fresh = new GrantScheduler({ clock, opcos: { op: RL } });
    if (withJournal) fresh.restore(journal);
    const granted: IssuedGrant[] = [];
    fresh.connect('pub', 'b', { expectedInstances: 3, limits: {}, usage: [], complete: true }); // b reconnects first
    asker(fresh, granted)('b', 6);
    t.equal(
      granted.length,
      withJournal ? 0 : 2,
      withJournal ? 'with the journal: nothing free' : 'without: 2 more in the same window (8 > 6)',
    );
    fresh.close();
  }
});

t.test('the local fallback: first local call a window after the loss and after the last granted call', async (t) => {
  // Frozen: with real time flowing underneath, a loaded machine could pass a millisecond between
  // the ledger's end and the test's reading of the clock.
  const clock = new TestClock({ frozen: true });
  const ledger = new UsageLedger(clock);
  const fallback = new LocalFallback(clock, 3, ledger, () => new Error('cancelled'));
  t.teardown(() => fallback.close(new Error('test over')));
  t.equal(fallback.opensAt('op', W), -Infinity, 'never had a hub: serves at once');
  const inFlight = ledger.start('op', 'g1', 'grant', W);
  await clock.advance(100);
  fallback.hubLost();
  const lostAt = clock.now();
  t.equal(LocalFallback.share(RL, 3), 2);
  const request: AdmissionRequest = {
    opcoId: 'op',
    rateLimit: RL,
    route: 'GET /dossiers',
    method: 'GET',
    priority: 5,
    tenant: 'cfa',
    synchronous: false,
    proven: true,
    unprovenLimit: 1,
  };
  const admitted: number[] = [];
  const outcomes = [0, 1, 2].map(() =>
    fallback.acquire(request).then(
      (release) => (admitted.push(clock.now()), release(), 'admitted'),
      (err) => (err instanceof Rerouted ? 'rerouted' : 'failed'),
    ),
  );
  await clock.advance(500);
  ledger.end(inFlight);
  const endedAt = clock.now();
  t.ok(
    fallback.opensAt('op', W) >= endedAt + W && endedAt > lostAt,
    'the own granted call ended after the loss: a window after its end',
  );
  await clock.advance(W - 300);
  t.same(admitted, [], 'nothing before');
  for (let i = 0; i < 20 && admitted.length < 2; i++) await clock.advance(100);
  t.equal(admitted.length, 2, 'then the share, 2 per window');
  t.ok(admitted.every((at) => at >= endedAt + W));
  fallback.hubBack();
  t.same(
    await Promise.all(outcomes),
    ['admitted', 'admitted', 'rerouted'],
    'the hub is back: the ask still waiting goes to it',
  );
});

t.test(
  'exact across a hub crash and restart: random load, instances reconnecting, one dying with the hub',
  async (t) => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]) {
      const random = seeded(seed);
      const clock = new TestClock();
      const world: SimWorld = { clock, random, rateLimit: RL, expectedInstances: 3, arrivals: [] };
      const journal: JournalGrant[] = [];
      const hub1 = new GrantScheduler({ clock, opcos: { op: RL }, observer: journalInto(journal) });
      const [a, b, c] = ['a', 'b', 'c'].map((id) => new SimInstance(id, world)) as [
        SimInstance,
        SimInstance,
        SimInstance,
      ];
      for (const instance of [a, b, c]) instance.connect(hub1);
      // On odd seeds the instance that dies with the hub takes most of the budget in a burst just
      // before the crash, and the others are busy after the restart.
      const before = new Map([
        [a, seed % 2 ? 0.02 : 0.6],
        [b, seed % 2 ? 0.02 : 0.3],
        [c, seed % 2 ? 0 : 0.2],
      ]);
      let burst = seed % 2 === 0;
      const after = new Map([
        [a, 0.6],
        [b, 0.3],
      ]);
      const crashAt = clock.now() + 3000;
      const restartAt = crashAt + random() * 1500; // down for 0 to 1.5 windows
      const reconnectAt = new Map([
        [a, restartAt + random() * 500],
        [b, restartAt + random() * 900],
      ]); // within the first window
      const endAt = restartAt + 4000;
      let hub2: GrantScheduler | undefined;
      let crashed = false;
      while (clock.now() < endAt) {
        const now = clock.now();
        if (!burst && now >= crashAt - 100) {
          burst = true;
          for (let i = 0; i < RL.limit; i++) void c.call();
        }
        if (!crashed && now >= crashAt) {
          crashed = true;
          hub1.close();
          a.lose();
          b.lose();
          c.die(); // its grants in flight are never reported done
        }
        if (crashed && !hub2 && now >= restartAt) {
          hub2 = new GrantScheduler({ clock, opcos: { op: RL } });
          hub2.restore(journal.filter((g) => (g.endedAt ?? g.deadline) + W > now)); // what GrantJournal.load reads
        }
        for (const [instance, at] of reconnectAt) {
          if (hub2 && now >= at) {
            instance.connect(hub2);
            reconnectAt.delete(instance);
          }
        }
        for (const [instance, rate] of crashed ? after : before)
          if (!instance.dead && random() < rate) void instance.call();
        await clock.advance(20);
      }
      hub2?.close();
      a.die();
      b.die();
      const local = world.arrivals.filter((x) => x.mode === 'local').length;
      const busiest = maxInWindow(
        world.arrivals.map((x) => x.at),
        W,
      );
      t.ok(
        busiest <= RL.limit,
        `seed ${seed}: down ${Math.round(restartAt - crashAt)} ms, ${world.arrivals.length} calls (${local} local): at most ${busiest} in a window`,
      );
    }
  },
);
