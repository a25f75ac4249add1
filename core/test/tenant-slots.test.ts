// Issue 38: one tenant's messages hold at most a share of a worker's slots; a message over the
// share waits a moment for one of its tenant's slots before it is turned back.
import t from 'tap';
import { SLOT_WAIT_MS, TenantSlots, TestClock } from '../src/application.js';

function gated() {
  const gates: Array<() => void> = [];
  return { gates, hold: () => new Promise<void>((resolve) => gates.push(resolve)) };
}

t.test(
  'a tenant over its share waits for its own slot; another tenant, and an older message without tenant, run at once',
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const slots = new TenantSlots(4, 0.75, clock);
    t.equal(slots.perTenant, 3);
    const { gates, hold } = gated();
    const running = [slots.run('a', hold), slots.run('a', hold), slots.run('a', hold)];
    let ran = false;
    const fourth = slots.run('a', async () => void (ran = true));
    t.equal(await slots.run('b', async () => undefined), true, 'tenant b runs at once');
    t.equal(await slots.run(undefined, async () => undefined), true, 'a message naming no tenant runs');
    await clock.advance(SLOT_WAIT_MS - 1);
    t.notOk(ran, 'the fourth of tenant a waits while its three run');
    gates.shift()!();
    t.equal(await fourth, true, 'and takes the slot one of them freed, without going back to the queue');
    t.ok(ran);
    for (const open of gates) open();
    t.same(await Promise.all(running), [true, true, true]);
    t.equal(new TenantSlots(1, 0.75).perTenant, 1, 'at least one slot');
  },
);

t.test(
  "a wait that runs out turns the message back, and the tenant's next ones at once until one of its slots frees",
  async (t) => {
    const clock = new TestClock({ frozen: true });
    const slots = new TenantSlots(4, 0.5, clock);
    const { gates, hold } = gated();
    const running = [slots.run('a', hold), slots.run('a', hold)];
    let ran = 0;
    const waiting = slots.run('a', async () => void ran++);
    await clock.advance(SLOT_WAIT_MS);
    t.equal(await waiting, false, 'turned back once its wait ran out');
    t.equal(
      await slots.run('a', async () => void ran++),
      false,
      "the next one at once: a's slots are held by long work",
    );
    t.equal(ran, 0, 'neither ran');
    t.equal(await slots.run('b', async () => void ran++), true, 'b runs meanwhile');
    gates.shift()!();
    await running[0];
    t.equal(await slots.run('a', async () => void ran++), true, "once one of a's slots freed, a runs again");
    const again = slots.run('a', async () => void ran++);
    gates.shift()!();
    t.equal(await again, true, 'and waits again for the next');
    t.equal(ran, 3);
    t.equal(clock.pending(), 0, 'no wait left scheduled');
  },
);
