// Issue 38 point 4: who gets the delivery worker's next free slot (turns.ts). Attempts here are
// promises the test settles by hand: no timers, the order of starts is the whole answer.
import t from 'tap';
import { turnLimits, Turns, type Turn, type TurnLimits } from '../src/turns.js';

interface Started extends Turn {
  finish(): void;
}

function turns(limits: Partial<TurnLimits> & { slots: number }) {
  const started: Started[] = [];
  const queue = new Turns(
    { ...turnLimits(limits.slots), ...limits },
    (turn) => new Promise<void>((resolve) => started.push({ ...turn, finish: resolve })),
  );
  let n = 0;
  const offer = (tenant: string, origin = 'http://r', count = 1) => {
    for (let i = 0; i < count; i++)
      queue.offer({ deliveryId: `${tenant}-${origin}-${n++}`, tenant, origin, redelivered: false });
  };
  const running = () => started.filter((s) => !(s as { done?: boolean }).done);
  const finish = async (turn: Started) => {
    (turn as { done?: boolean }).done = true;
    turn.finish();
    // The slot is given again once the attempt's promise has settled.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { queue, started, offer, running, finish };
}

t.test('the defaults: a quarter of the slots kept, half of them per origin', async (t) => {
  t.same(turnLimits(16), { slots: 16, reserve: 4, perOrigin: 8, maxWaitingPerTenant: 5000 });
  t.match(turnLimits(4), { reserve: 1, perOrigin: 2 });
  t.match(turnLimits(2), { reserve: 1, perOrigin: 1 });
  t.match(turnLimits(1), { reserve: 0, perOrigin: 1 });
});

t.test('a tenant with a backlog leaves the kept slots to a tenant with nothing in flight', async (t) => {
  const { queue, started, offer } = turns({ slots: 16 });
  // 20 webhooks on 4 receivers, 64 deliveries: what issue 38 measured.
  for (let i = 0; i < 64; i++) offer('A', `http://dead-${i % 4}`);
  t.equal(queue.inFlight('A'), 12, 'A holds 16 - 4 slots');
  t.equal(queue.waiting('A'), 52);
  t.same(new Set(started.map((s) => s.origin)).size, 4, 'spread over its four receivers');
  offer('B');
  t.equal(started.at(-1)?.tenant, 'B', "B's delivery starts at once");
  t.equal(queue.inFlight(), 13);
  // Two more tenants with nothing in flight: they take kept slots too.
  offer('C');
  offer('D');
  t.same(
    started.slice(-2).map((s) => s.tenant),
    ['C', 'D'],
  );
  t.equal(queue.inFlight(), 15);
});

t.test('several tenants with backlogs share the unkept slots by turns', async (t) => {
  const { queue, started, offer, running, finish } = turns({ slots: 8 });
  offer('A', 'http://a', 20);
  offer('B', 'http://b', 20);
  t.equal(queue.inFlight('A'), 4, 'A: at most perOrigin (4) to its one origin');
  t.equal(queue.inFlight('B'), 2, 'B: the rest of the unkept slots');
  t.equal(queue.inFlight(), 6, 'the 2 kept slots stay free for a tenant with nothing in flight');
  const before = started.length;
  // Every slot freed goes to the tenants in turn: A, B, A, B...
  for (let i = 0; i < 6; i++) await finish(running()[0]);
  const next = started.slice(before).map((s) => s.tenant);
  t.equal(next.length, 6);
  t.same(next, ['A', 'B', 'A', 'B', 'A', 'B'], 'turns alternate');
  t.equal(queue.inFlight(), 6);
});

t.test('the turn goes round: a tenant served goes to the back', async (t) => {
  const { started, offer, running, finish } = turns({ slots: 2, reserve: 0, perOrigin: 2 });
  offer('A', 'http://a', 2);
  offer('B', 'http://b', 3);
  offer('C', 'http://c', 3);
  t.same(
    started.map((s) => s.tenant),
    ['A', 'A'],
  );
  for (let i = 0; i < 6; i++) await finish(running()[0]);
  t.same(
    started.slice(2).map((s) => s.tenant),
    ['B', 'C', 'B', 'C', 'B', 'C'],
  );
});

t.test('within a tenant, its origins take turns and one origin holds at most perOrigin', async (t) => {
  const { queue, started, offer, running, finish } = turns({ slots: 16 });
  offer('A', 'http://slow', 20);
  offer('A', 'http://fast', 5);
  t.equal(started.filter((s) => s.origin === 'http://slow').length, 8, 'the slow origin holds half');
  t.equal(started.filter((s) => s.origin === 'http://fast').length, 4, "the fast one the rest of the tenant's 12");
  for (const s of running().filter((r) => r.origin === 'http://fast')) await finish(s);
  t.equal(started.filter((s) => s.origin === 'http://fast').length, 5, 'and its last one when a slot frees');
  t.equal(queue.inFlight('A'), 9);
});

t.test('an id is held once; a full backlog is left to the sweep; stop forgets what waits', async (t) => {
  const { queue, started } = turns({ slots: 1, reserve: 0, maxWaitingPerTenant: 2 });
  const turn = (id: string) => ({ deliveryId: id, tenant: 'A', origin: 'o', redelivered: false });
  t.ok(queue.offer(turn('1')));
  t.notOk(queue.offer(turn('1')), 'running: not taken again');
  t.ok(queue.offer(turn('2')));
  t.notOk(queue.offer(turn('2')), 'waiting: not taken again');
  t.ok(queue.offer(turn('3')));
  t.notOk(queue.offer(turn('4')), "beyond the tenant's backlog bound");
  t.ok(queue.offer({ ...turn('5'), tenant: 'B' }), 'another tenant has its own bound');
  t.equal(queue.waiting(), 3);
  queue.stop();
  t.equal(queue.waiting(), 0);
  started[0].finish();
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(started.length, 1, 'nothing started after stop');
  t.notOk(queue.offer(turn('6')));
});

t.test('a start that throws frees its slot', async (t) => {
  let calls = 0;
  const queue = new Turns({ slots: 1, reserve: 0, perOrigin: 1, maxWaitingPerTenant: 10 }, () => {
    calls += 1;
    if (calls === 1) throw new Error('boom');
    return new Promise(() => {});
  });
  queue.offer({ deliveryId: '1', tenant: 'A', origin: 'o', redelivered: false });
  queue.offer({ deliveryId: '2', tenant: 'A', origin: 'o', redelivered: false });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(calls, 2);
  t.equal(queue.inFlight(), 1);
});

t.test('holds: a delivery waiting or running is held until its attempt settles', async (t) => {
  const { queue, offer, started, finish } = turns({ slots: 1 });
  offer('a', 'http://r', 2);
  const [first] = started;
  t.ok(queue.holds(first.deliveryId), 'running: held');
  t.ok(queue.holds('a-http://r-1'), 'waiting: held');
  t.notOk(queue.holds('b-http://r-9'), 'never offered: not held');
  await finish(first);
  t.notOk(queue.holds(first.deliveryId), 'settled: no longer held');
});
