// The grant scheduler on a TestClock (D11, D29): the rolling-window bound, the whole budget to
// whoever asks, priorities, CFA tenants taking turns, unused and dead grants, cancellation,
// budgets per fleet, limits changed at once; the unproven tenants' slice (issue 27).
import t, { type Test } from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { GrantScheduler, type AskInput, type IssuedGrant } from '../src/index.js';
import { maxInWindow, seeded } from './fixtures/windows.js';

const W = 1000;

function setup(t: Test, limit = 3, options: { startedAt?: number; unprovenShare?: number } = {}) {
  // Frozen: the window checks below are 200-300 ms from the edge, which real time flowing under
  // a loaded machine could cross between the test's advance() and its look at the grants.
  const clock = new TestClock({ frozen: true });
  // Started long ago: the restart reserve (restart-rule.test.ts) plays no part here.
  const scheduler = new GrantScheduler({
    clock,
    opcos: { op: { limit, windowMs: W } },
    startedAt: options.startedAt ?? clock.now() - 10 * W,
    unprovenShare: options.unprovenShare,
  });
  t.teardown(() => scheduler.close());
  const granted: IssuedGrant[] = [];
  let next = 0;
  const ask = (fields: Partial<AskInput> = {}, fleet = 'pub') =>
    scheduler.ask(
      fleet,
      {
        askId: `a${next++}`,
        instanceId: 'i1',
        opcoId: 'op',
        method: 'GET',
        route: 'GET /dossiers',
        priority: 5,
        tenant: 'cfa-a',
        rateLimit: { limit, windowMs: W },
        ...fields,
      },
      (grant) => granted.push(grant),
    )!;
  return { clock, scheduler, granted, ask };
}

t.test('the whole budget goes to one busy instance while others are idle; then asks wait', async (t) => {
  const { scheduler, granted, ask } = setup(t, 5);
  scheduler.connect('pub', 'idle-1', { expectedInstances: 3, limits: {}, usage: [], complete: true });
  scheduler.connect('pub', 'idle-2', { expectedInstances: 3, limits: {}, usage: [], complete: true });
  for (let i = 0; i < 6; i++) ask({ instanceId: 'busy' });
  t.equal(granted.length, 5, 'no fixed per-instance share: all 5 slots to the one instance asking');
  t.ok(granted.every((g) => g.instanceId === 'busy'));
  const [view] = scheduler.limits();
  t.match(view, {
    fleetId: 'pub',
    opcoId: 'op',
    configuredLimit: 5,
    effectiveLimit: 5,
    windowMs: W,
    grantsInWindow: 5,
    waiting: 1,
  });
});

t.test('a used grant counts from issue until done + window; then the next ask is served', async (t) => {
  const { clock, scheduler, granted, ask } = setup(t, 1);
  ask();
  ask();
  t.equal(granted.length, 1);
  await clock.advance(5000);
  t.equal(granted.length, 1, 'held while the call runs, however long');
  scheduler.done('pub', 'i1', granted[0].grantId, 'used');
  await clock.advance(W - 200);
  t.equal(granted.length, 1, 'still inside the window after the call ended');
  await clock.advance(201);
  t.equal(granted.length, 2, 'served once the ended call left the window');
  t.ok(granted[1].waitedMs >= 5000 + W);
});

t.test('an unused grant frees its slot at once', async (t) => {
  const { scheduler, granted, ask } = setup(t, 1);
  ask();
  ask();
  t.equal(granted.length, 1);
  t.ok(scheduler.done('pub', 'i1', granted[0].grantId, 'unused'));
  t.equal(granted.length, 2, 'no waste: the waiting ask got the slot');
  t.equal(scheduler.limits()[0].occupied, 1);
});

t.test('only the instance holding a grant can end it', async (t) => {
  const { scheduler, granted, ask } = setup(t, 1);
  ask({ instanceId: 'i1' });
  t.notOk(scheduler.done('pub', 'i2', granted[0].grantId, 'unused'), 'another instance');
  t.notOk(scheduler.done('other-tenant', 'i1', granted[0].grantId, 'unused'), 'another fleet');
  t.notOk(scheduler.done('pub', 'i1', 'no-such-grant', 'unused'));
  t.equal(scheduler.limits()[0].occupied, 1);
});

t.test('a grant never reported done stays counted until its exp + window', async (t) => {
  const { clock, scheduler, granted, ask } = setup(t, 1);
  ask({ instanceId: 'dies' });
  scheduler.disconnect('pub', 'dies');
  ask({ instanceId: 'lives' });
  const expMs = granted[0].exp * 1000;
  t.equal(granted[0].exp - granted[0].iat, 30, 'JWT lifetime 30 s');
  await clock.advance(expMs + W - clock.now() - 300);
  t.equal(granted.length, 1, 'counted until exp + window');
  await clock.advance(301);
  t.equal(granted.length, 2);
});

t.test('waiting asks are served by priority, then CFA tenants take turns', async (t) => {
  const { scheduler, granted, ask } = setup(t, 1);
  ask({ askId: 'first' });
  ask({ askId: 'sync-a1', priority: 10, tenant: 'cfa-a' });
  ask({ askId: 'sync-a2', priority: 10, tenant: 'cfa-a' });
  ask({ askId: 'sync-a3', priority: 10, tenant: 'cfa-a' });
  ask({ askId: 'sync-b1', priority: 10, tenant: 'cfa-b' });
  ask({ askId: 'sync-b2', priority: 10, tenant: 'cfa-b' });
  ask({ askId: 'default', priority: 5, tenant: 'cfa-c' });
  ask({ askId: 'client', priority: 1, tenant: 'cfa-d' });
  // Each grant is returned unused, so the next one is served at once, in serving order.
  for (let i = 0; i < 7; i++) scheduler.done('pub', 'i1', granted[i].grantId, 'unused');
  t.same(
    granted.map((g) => g.askId),
    ['first', 'client', 'default', 'sync-a1', 'sync-b1', 'sync-a2', 'sync-b2', 'sync-a3'],
  );
});

t.test('a cancelled ask is never granted', async (t) => {
  const { scheduler, granted, ask } = setup(t, 1);
  ask();
  const waiting = ask({ askId: 'cancelled' });
  ask({ askId: 'kept' });
  t.ok(scheduler.cancel('pub', waiting));
  t.notOk(scheduler.cancel('pub', waiting), 'twice is harmless');
  scheduler.done('pub', 'i1', granted[0].grantId, 'unused');
  t.same(
    granted.map((g) => g.askId),
    ['a0', 'kept'],
  );
});

t.test('two fleets never share a budget', async (t) => {
  const { granted, ask } = setup(t, 2);
  ask({}, 'pub-1');
  ask({}, 'pub-1');
  ask({}, 'pub-1');
  ask({}, 'pub-2');
  ask({}, 'pub-2');
  t.equal(granted.filter((g) => g.fleetId === 'pub-1').length, 2);
  t.equal(granted.filter((g) => g.fleetId === 'pub-2').length, 2, 'pub-2 has its own 2 slots');
});

t.test('an opcoId the config does not list takes the first limit reported for it', async (t) => {
  const { scheduler, granted, ask } = setup(t, 2);
  ask({ opcoId: 'other', rateLimit: { limit: 1, windowMs: 500 } });
  ask({ opcoId: 'other', rateLimit: { limit: 50, windowMs: 500 } });
  t.equal(granted.length, 1, 'the second, higher limit is ignored');
  t.match(
    scheduler.limits().find((v) => v.opcoId === 'other'),
    { configuredLimit: 1, windowMs: 500 },
  );
});

t.test('a lowered limit applies at once, to waiting asks too; a raised one serves them', async (t) => {
  const { scheduler, granted, ask } = setup(t, 4);
  ask();
  ask();
  scheduler.setOpcoLimits({ op: { limit: 2, windowMs: W } });
  ask({ askId: 'waits' });
  t.equal(granted.length, 2, 'the lowered limit holds the new ask');
  scheduler.done('pub', 'i1', granted[0].grantId, 'unused');
  t.equal(granted.length, 3, 'served within the lowered limit');
  ask({ askId: 'waits-too' });
  t.equal(granted.length, 3);
  scheduler.setOpcoLimits({ op: { limit: 3, windowMs: W } });
  t.equal(granted.length, 4, 'a raised limit serves the waiting ask at once');
  t.match(scheduler.limits()[0], { configuredLimit: 3, effectiveLimit: 3 });
});

t.test('exact: never more than the limit in any rolling window, random arrivals and call durations', async (t) => {
  for (const seed of [11, 22, 33, 44, 55, 66]) {
    const random = seeded(seed);
    const limit = 2 + Math.floor(random() * 9);
    const clock = new TestClock();
    const scheduler = new GrantScheduler({
      clock,
      opcos: { op: { limit, windowMs: W } },
      startedAt: clock.now() - 10 * W,
    });
    const arrivals: number[] = [];
    let asked = 0;
    let unused = 0;
    const onGrant = (grant: IssuedGrant) => {
      const roll = random();
      if (roll < 0.1) {
        unused += 1;
        queueMicrotask(() => scheduler.done('pub', grant.instanceId, grant.grantId, 'unused'));
        return;
      }
      // The upstream sees the call somewhere between the grant and the end of the call.
      const duration = random() * 400;
      clock.setTimeout(() => arrivals.push(clock.now()), random() * duration);
      if (roll > 0.995) return; // the instance died: never reported done
      clock.setTimeout(() => scheduler.done('pub', grant.instanceId, grant.grantId, 'used'), duration);
    };
    for (let step = 0; step < 2000; step++) {
      if (random() < 0.3) {
        for (let k = Math.floor(random() * 3); k >= 0; k--) {
          const ask = scheduler.ask(
            'pub',
            {
              askId: `a${asked++}`,
              instanceId: `i${Math.floor(random() * 3)}`,
              opcoId: 'op',
              method: 'GET',
              route: 'GET /x',
              priority: [1, 5, 10][Math.floor(random() * 3)],
              tenant: `cfa-${Math.floor(random() * 4)}`,
              rateLimit: { limit, windowMs: W },
            },
            onGrant,
          )!;
          if (random() < 0.05) clock.setTimeout(() => scheduler.cancel('pub', ask), random() * 500);
        }
      }
      await clock.advance(10);
    }
    await clock.advance(500); // let the last calls arrive
    scheduler.close();
    t.ok(arrivals.length > 5 * limit, `seed ${seed}: ${arrivals.length} calls, ${unused} grants unused`);
    t.equal(maxInWindow(arrivals, W), limit, `seed ${seed}: the limit ${limit} is reached and never exceeded`);
  }
});

t.test('a flood of unproven asks gets at most the slice of each window; proven asks get the rest', async (t) => {
  const { clock, scheduler, granted, ask } = setup(t, 10, { unprovenShare: 0.2 });
  for (let i = 0; i < 100; i++) ask({ tenant: `invented-${i}`, proven: false, priority: 1 });
  for (let i = 0; i < 30; i++) ask({ tenant: `cfa-${i % 3}`, proven: true, priority: 10 });
  t.match(scheduler.limits()[0], {
    effectiveLimit: 10,
    occupied: 10,
    waiting: 120,
    unproven: { limit: 2, occupied: 2, waiting: 98 },
  });
  const perWindow: Array<{ unproven: number; proven: number }> = [];
  for (let window = 0; window < 5; window++) {
    const these = granted.splice(0);
    perWindow.push({
      unproven: these.filter((g) => g.unproven).length,
      proven: these.filter((g) => !g.unproven).length,
    });
    for (const grant of these) scheduler.done('pub', 'i1', grant.grantId, 'used');
    await clock.advance(W);
  }
  t.same(
    perWindow,
    [
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 8 },
      { unproven: 2, proven: 6 },
      { unproven: 2, proven: 0 },
    ],
    'the slice each window, though the strangers asked first and at a better priority; the rest to proven tenants; a window the proven leave is not given to strangers',
  );
});

t.test('a proven ask queued behind unproven asks blocked on the slice is served at once', async (t) => {
  const { scheduler, granted, ask } = setup(t, 10); // unprovenShare 0.1: a slice of 1
  ask({ askId: 'stranger-1', tenant: 'x1', proven: false, priority: 1 });
  ask({ askId: 'stranger-2', tenant: 'x2', proven: false, priority: 1 });
  ask({ askId: 'stranger-3', tenant: 'x3', proven: false, priority: 1 });
  t.same(
    granted.map((g) => g.askId),
    ['stranger-1'],
  );
  ask({ askId: 'sync', tenant: 'cfa', proven: true, priority: 10 });
  t.same(
    granted.map((g) => g.askId),
    ['stranger-1', 'sync'],
    'not held back by the two strangers waiting before it',
  );
  t.match(scheduler.limits()[0], { occupied: 2, waiting: 2, unproven: { limit: 1, occupied: 1, waiting: 2 } });
  scheduler.done('pub', 'i1', granted[0].grantId, 'unused');
  t.same(
    granted.map((g) => g.askId),
    ['stranger-1', 'sync', 'stranger-2'],
    'an unused unproven grant frees its slice slot at once',
  );
});

t.test('an ask of an instance of the previous version (no `proven`) is served as proven', async (t) => {
  const { scheduler, granted, ask } = setup(t, 3); // a slice of 1
  ask({ askId: 'old-1' });
  ask({ askId: 'old-2' });
  ask({ askId: 'old-3' });
  t.same(
    granted.map((g) => g.askId),
    ['old-1', 'old-2', 'old-3'],
    'the whole budget, not the slice of one',
  );
  t.ok(granted.every((g) => !g.unproven));
  t.match(scheduler.limits()[0], { occupied: 3, unproven: { limit: 1, occupied: 0, waiting: 0 } });
});

t.test('the slice follows the effective limit and the share; a new share applies at once', async (t) => {
  const { scheduler, granted, ask } = setup(t, 100, { unprovenShare: 0.05 });
  for (let i = 0; i < 10; i++) ask({ tenant: `x${i}`, proven: false });
  t.equal(granted.length, 5, '5% of 100');
  scheduler.setUnprovenShare(0.08);
  t.equal(granted.length, 8, 'a raised share serves the waiting asks at once');
  t.match(scheduler.limits()[0].unproven, { limit: 8, occupied: 8, waiting: 2 });
  scheduler.setOpcoLimits({ op: { limit: 10, windowMs: W } });
  t.match(scheduler.limits()[0].unproven, { limit: 1, occupied: 8 }, 'at least one call of a smaller limit');
});

t.test('a restarted hub counts the unproven grants of its journal in the slice', async (t) => {
  const { clock, scheduler, granted, ask } = setup(t, 10);
  const now = clock.now();
  scheduler.restore([
    {
      id: 'g-held',
      fleetId: 'pub',
      opcoId: 'op',
      instanceId: 'i0',
      issuedAt: now - 100,
      deadline: now + 30_000,
      rateLimit: { limit: 10, windowMs: W },
      unproven: true,
    },
    {
      id: 'g-old',
      fleetId: 'pub',
      opcoId: 'op',
      instanceId: 'i0',
      issuedAt: now - 200,
      deadline: now + 30_000,
      endedAt: now - 50,
      rateLimit: { limit: 10, windowMs: W },
    },
  ]);
  ask({ tenant: 'x', proven: false });
  ask({ tenant: 'cfa', proven: true });
  t.same(
    granted.map((g) => g.unproven),
    [false],
    'the slice of one is held by the journalled grant; a journal of before issue 27 counts as proven',
  );
  t.match(scheduler.limits()[0], { occupied: 3, unproven: { occupied: 1, waiting: 1 } });
});

t.test(
  'exact with lanes: never more than the limit, nor unproven grants over the slice, in any rolling window',
  async (t) => {
    for (const seed of [7, 17, 27, 37]) {
      const random = seeded(seed);
      const limit = 5 + Math.floor(random() * 16);
      const share = 0.1 + random() * 0.3;
      const slice = Math.max(1, Math.floor(limit * share));
      const clock = new TestClock();
      const scheduler = new GrantScheduler({
        clock,
        opcos: { op: { limit, windowMs: W } },
        startedAt: clock.now() - 10 * W,
        unprovenShare: share,
      });
      const all: number[] = [];
      const strangers: number[] = [];
      let asked = 0;
      const onGrant = (grant: IssuedGrant) => {
        if (random() < 0.1)
          return queueMicrotask(() => scheduler.done('pub', grant.instanceId, grant.grantId, 'unused'));
        const duration = random() * 300;
        clock.setTimeout(() => (grant.unproven ? strangers : all).push(clock.now()), random() * duration);
        clock.setTimeout(() => scheduler.done('pub', grant.instanceId, grant.grantId, 'used'), duration);
      };
      for (let step = 0; step < 1500; step++) {
        if (random() < 0.4) {
          const proven = random() < 0.4;
          scheduler.ask(
            'pub',
            {
              askId: `a${asked++}`,
              instanceId: 'i1',
              opcoId: 'op',
              method: 'GET',
              route: 'GET /x',
              priority: [1, 5, 10][Math.floor(random() * 3)],
              tenant: proven ? `cfa-${Math.floor(random() * 3)}` : `invented-${asked}`,
              rateLimit: { limit, windowMs: W },
              proven,
            },
            onGrant,
          );
        }
        await clock.advance(10);
      }
      await clock.advance(400);
      scheduler.close();
      t.equal(
        maxInWindow([...all, ...strangers], W),
        limit,
        `seed ${seed}: the limit ${limit} reached and never exceeded`,
      );
      t.equal(
        maxInWindow(strangers, W),
        slice,
        `seed ${seed}: unproven calls reach their slice of ${slice} and never exceed it`,
      );
      t.ok(all.length > strangers.length, `seed ${seed}: ${all.length} proven calls, ${strangers.length} unproven`);
    }
  },
);
