// Issue 38: one tenant's messages hold at most a share of a worker's slots.
import t from 'tap';
import { TenantSlots } from '../src/index.js';

t.test('a tenant over its share is turned back unrun; another tenant, and an older message without tenant, run', async (t) => {
  const slots = new TenantSlots(4, 0.75);
  t.equal(slots.perTenant, 3);
  const gates: Array<() => void> = [];
  const hold = () => new Promise<void>((resolve) => gates.push(resolve));
  const running = [slots.run('a', hold), slots.run('a', hold), slots.run('a', hold)];
  let ran = false;
  t.equal(await slots.run('a', async () => void (ran = true)), false, 'the fourth of tenant a is turned back');
  t.notOk(ran, 'unrun');
  t.equal(await slots.run('b', async () => void (ran = true)), true, 'tenant b runs at once');
  t.equal(await slots.run(undefined, async () => undefined), true, 'a message naming no tenant runs');
  gates.shift()!();
  await running[0];
  t.equal(await slots.run('a', async () => undefined), true, 'once one of a\'s ended, a runs again');
  for (const open of gates) open();
  t.same(await Promise.all(running), [true, true, true]);
  t.equal(new TenantSlots(1, 0.75).perTenant, 1, 'at least one slot');
});
