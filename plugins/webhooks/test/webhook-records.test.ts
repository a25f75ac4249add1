// Webhooks in the store (webhook-records.ts; SPEC 2.7, 6.3, D9, P10) on the embedded store: the secret sealed, 20 per
// tenant even when created at once, tenants kept apart, every change told before it answers (what keeps the worker's
// copies honest), the rotated secret's 24 h, and the 5-day failing streak that switches a webhook off once.
import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { createEmbeddedStore } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createSealer } from '@opco-proxy/core/application';
import { eventually } from '@opco-proxy/core/eventually';
import { DELETED_REVISION, keysAt, toResource, WebhookRecords, type WebhookRecord } from '../src/webhook-records.js';

const SECRET = 'e5'.repeat(32);
const NEW_SECRET = 'f6'.repeat(32);
const DAY = 24 * 60 * 60 * 1000;
type Changes = Partial<Omit<WebhookRecord, 'secret'>>;

async function setup(t: Test) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const records = new WebhookRecords(store, createSealer(randomBytes(32)));
  await records.prepare();
  const told: [string, number][] = [];
  records.followChanges(async (id, revision) => void told.push([id, revision]));
  const create = (id: string, tenant = 'cfa-a', changes: Changes = {}) =>
    records.create({
      _id: id,
      tenant,
      callbackUrl: `https://${id}.example/hook`,
      events: ['job.completed'],
      secret: SECRET,
      active: true,
      createdAt: clock.date(),
      ...changes,
    });
  return { store, clock, records, told, create, stored: store.collection<WebhookRecord>('webhooks') };
}

t.test('the secret is stored sealed and unsealed to sign; a record starts at revision 0 in a free slot', async (t) => {
  const { store, records, create, stored } = await setup(t);
  const [first, second] = [await create('wh-1'), await create('wh-2')];
  t.match(first, { slot: 0, revision: 0 });
  t.equal(second.slot, 1);
  const doc = (await stored.findOne({ _id: 'wh-1' }))!;
  t.notOk(JSON.stringify(doc).includes(SECRET), 'a dump of the store does not hold the secret');
  t.notOk(JSON.stringify(doc).includes(Buffer.from(SECRET, 'hex').toString('base64')), 'nor its bytes');
  t.equal(records.secretOf(doc), SECRET);
  t.same(records.unsealedSecrets(doc), { current: SECRET });
  const otherKey = new WebhookRecords(store, createSealer(randomBytes(32)));
  t.throws(() => otherKey.secretOf(doc), 'another master key cannot unseal it');
});

t.test('D9: a tenant holds at most 20 webhooks, even created at once; another tenant has its own 20', async (t) => {
  const { records, create } = await setup(t);
  const results = await Promise.allSettled(Array.from({ length: 24 }, (_, n) => create(`wh-${n}`)));
  const created = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
  t.equal(created.length, 20);
  const full = { code: 'VALIDATION_ERROR', status: 400, message: /at most 20 webhooks per API key/ };
  const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  t.equal(refused.length, 4);
  for (const reason of refused) t.match(reason, full, 'a creation that lost every race to the last slot: 400, not 503');
  t.same(
    created.map((w) => w.slot).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, i) => i),
    'one per slot',
  );
  t.equal((await records.list('cfa-a')).length, 20);
  await t.rejects(create('wh-21'), full, 'the 21st: 400 VALIDATION_ERROR');
  t.match(await create('wh-b', 'cfa-b'), { slot: 0 }, 'another tenant');
  const freed = created[7];
  t.equal(await records.remove(freed._id, 'cfa-a'), true);
  t.match(await create('wh-again'), { slot: freed.slot }, 'a removed webhook frees its slot');
});

t.test('D9: a creation that loses the race for every free slot is answered 400, not 503', async (t) => {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const stored = store.collection<WebhookRecord>('webhooks');
  let rivals = 0;
  // Between each reading of the slots and the insert, another creation takes the first free slot.
  const racing = {
    ...store,
    collection: () => ({
      ...stored,
      createIndex: stored.createIndex.bind(stored),
      insertOne: stored.insertOne.bind(stored),
      find: async (filter: Record<string, unknown>) => {
        const found = await stored.find(filter);
        const used = new Set(found.map((w) => w.slot));
        const slot = Array.from({ length: 20 }, (_, i) => i).find((i) => !used.has(i));
        if (slot !== undefined) {
          rivals++;
          const rival = { ...found[0], _id: `rival-${slot}`, tenant: 'cfa-a', slot, revision: 0 };
          await stored.insertOne(rival);
        }
        return found;
      },
    }),
  } as unknown as typeof store;
  const records = new WebhookRecords(racing, createSealer(randomBytes(32)));
  await records.prepare();
  await t.rejects(
    records.create({
      _id: 'wh-late',
      tenant: 'cfa-a',
      callbackUrl: 'https://late.example/hook',
      events: ['job.completed'],
      secret: SECRET,
      active: true,
      createdAt: new Date(),
    }),
    { code: 'VALIDATION_ERROR', status: 400, message: /at most 20 webhooks per API key/ },
  );
  t.equal(rivals, 20, 'it lost 20 races, one per slot');
  t.equal(await stored.count({ tenant: 'cfa-a' }), 20);
});

t.test('a tenant reads and changes only its own webhooks', async (t) => {
  const { clock, records, told, create } = await setup(t);
  await create('wh-1');
  await clock.advance(1000);
  await create('wh-2');
  t.same(
    (await records.list('cfa-a')).map((w) => w._id),
    ['wh-1', 'wh-2'],
    'oldest first',
  );
  t.same(await records.list('cfa-b'), []);
  t.equal(await records.get('wh-1', 'cfa-b'), null);
  t.equal(await records.find('wh-1', 'cfa-b'), null);
  t.equal(await records.update('wh-1', 'cfa-b', { active: false }), null);
  t.equal(await records.rotate('wh-1', 'cfa-b', NEW_SECRET, clock.date()), null);
  t.equal(await records.remove('wh-1', 'cfa-b'), false);
  t.same(told, [], 'nothing changed, nothing told');
  t.same(
    await records.revisions(['wh-1', 'wh-2', 'wh-gone'], 'cfa-a'),
    new Map([
      ['wh-1', 0],
      ['wh-2', 0],
    ]),
  );
  t.same(await records.revisions(['wh-1'], 'cfa-b'), new Map());
});

t.test('SPEC 6.3 rule 4: an event goes to the active webhooks of its tenant subscribed to it', async (t) => {
  const { records, create } = await setup(t);
  await create('wh-both', 'cfa-a', { events: ['job.completed', 'job.failed'] });
  await create('wh-failed', 'cfa-a', { events: ['job.failed'] });
  await create('wh-off', 'cfa-a', { active: false });
  await create('wh-other', 'cfa-b');
  t.same(
    (await records.subscribers('cfa-a', 'job.completed')).map((w) => w._id),
    ['wh-both'],
  );
  t.same((await records.subscribers('cfa-a', 'job.failed')).map((w) => w._id).sort(), ['wh-both', 'wh-failed']);
  t.same(await records.subscribers('cfa-a', 'sync.started'), []);
});

t.test('every change raises the revision and is told before it answers; only the fields given change', async (t) => {
  const { records, create } = await setup(t);
  await create('wh-1', 'cfa-a', { description: 'erp' });
  let release = () => {};
  const told: [string, number][] = [];
  records.followChanges(async (id, revision) => {
    told.push([id, revision]);
    await new Promise<void>((resolve) => (release = resolve));
  });
  let answered = false;
  const update = records.update('wh-1', 'cfa-a', { events: ['job.failed'] }).then((w) => ((answered = true), w));
  await eventually(() => told.length === 1, 'the change told');
  t.equal(answered, false, 'not answered before the listener is done');
  release();
  const changed = await update;
  t.match(changed, { events: ['job.failed'], callbackUrl: 'https://wh-1.example/hook', description: 'erp' });
  t.equal(changed?.revision, 1);
  const removal = records.remove('wh-1', 'cfa-a');
  await eventually(() => told.length === 2, 'the removal told');
  release();
  t.equal(await removal, true);
  t.same(
    told,
    [
      ['wh-1', 1],
      ['wh-1', DELETED_REVISION],
    ],
    'a deletion is told above any revision',
  );
});

t.test('a rotated secret keeps signing beside the new one for 24 h, then stops (P10)', async (t) => {
  const { clock, records, told, create } = await setup(t);
  await create('wh-1');
  const rotated = (await records.rotate('wh-1', 'cfa-a', NEW_SECRET, clock.date()))!;
  const until = new Date(clock.now() + DAY);
  t.match(rotated, { revision: 1, previousSecretExpiresAt: until });
  t.same(told, [['wh-1', 1]]);
  const secrets = records.unsealedSecrets(rotated);
  t.same(secrets, { current: NEW_SECRET, previous: { secret: SECRET, until } });
  t.same(keysAt(secrets, new Date(until.getTime() - 1)), { current: NEW_SECRET, previous: SECRET });
  t.same(keysAt(secrets, until), { current: NEW_SECRET }, 'from its 24th hour, the new secret alone');
  t.same(keysAt({ current: SECRET }, clock.date()), { current: SECRET });
});

t.test('5 days of failures switch a webhook off, once; a delivered one ends the streak (P10)', async (t) => {
  const { clock, records, told, create, stored } = await setup(t);
  const fresh = await create('wh-1');
  const start = clock.date();
  t.equal(await records.noteFailed(fresh, start), null);
  t.same((await records.get('wh-1', 'cfa-a'))?.failingSince, start, 'the streak starts');
  await clock.advance(DAY);
  await records.noteFailed(fresh, clock.date());
  t.same((await records.get('wh-1', 'cfa-a'))?.failingSince, start, 'a later failure read from an old copy keeps it');
  const failing = (await records.get('wh-1', 'cfa-a'))!;
  t.equal(await records.noteFailed(failing, new Date(start.getTime() + 5 * DAY - 1)), null, 'a moment short of 5 days');
  const at = new Date(start.getTime() + 5 * DAY);
  const off = await records.noteFailed(failing, at);
  t.match(off, { active: false, disabledAt: at, disabledReason: `every delivery failed since ${start.toISOString()}` });
  t.equal(await records.noteFailed(failing, new Date(at.getTime() + 1)), null, 'switched off once: told once');
  t.match(toResource((await records.get('wh-1', 'cfa-a'))!), { active: false, disabledAt: at.toISOString() });

  const revived = (await records.update('wh-1', 'cfa-a', { active: true }))!;
  const forgotten = { active: true, failingSince: null, disabledAt: null, disabledReason: null };
  t.match(revived, forgotten, 'on again: why it was off is forgotten');
  await records.noteFailed(revived, clock.date());
  const before = told.length;
  await records.noteDelivered((await records.get('wh-1', 'cfa-a'))!);
  t.equal((await records.get('wh-1', 'cfa-a'))?.failingSince, null, 'a delivered one ends the streak');
  t.equal(told.length, before + 1);
  await records.noteDelivered((await records.get('wh-1', 'cfa-a'))!);
  t.equal(told.length, before + 1, 'no streak, no change');
  t.equal((await stored.findOne({ _id: 'wh-1' }))?.revision, told.at(-1)?.[1]);
});

t.test('operators list the disabled, the failing, or all webhooks of every tenant, newest first', async (t) => {
  const { clock, records, create } = await setup(t);
  const ok = await create('wh-ok');
  await clock.advance(1000);
  const failing = await create('wh-failing', 'cfa-b');
  await records.noteFailed(failing, clock.date());
  await clock.advance(1000);
  const disabled = await create('wh-disabled');
  await records.noteFailed(disabled, clock.date());
  await records.noteFailed((await records.get('wh-disabled', 'cfa-a'))!, new Date(clock.now() + 5 * DAY));
  const ids = async (state: 'disabled' | 'failing' | 'all') =>
    (await records.pageAll(state, {})).records.map((w) => w._id);
  t.same(await ids('disabled'), ['wh-disabled']);
  t.same(await ids('failing'), ['wh-disabled', 'wh-failing']);
  t.same(await ids('all'), ['wh-disabled', 'wh-failing', ok._id]);
});

t.test('SPEC 2.7 resource: never the secret; the description and why it is off only when there are', async (t) => {
  const { clock, create } = await setup(t);
  const plain = await create('wh-1');
  t.same(toResource(plain), {
    id: 'wh-1',
    callbackUrl: 'https://wh-1.example/hook',
    events: ['job.completed'],
    active: true,
    createdAt: clock.date().toISOString(),
  });
  const described = toResource({ ...plain, description: 'erp', disabledAt: clock.date(), disabledReason: 'failing' });
  t.match(described, { description: 'erp', disabledAt: clock.date().toISOString(), disabledReason: 'failing' });
  t.notOk('secret' in described);
});

t.test("P13: an unproven tenant's webhooks count for its address until proven, and go if refused", async (t) => {
  const { records, create } = await setup(t);
  await create('wh-1', 'cfa-new', { heldFrom: '203.0.113.7' });
  await create('wh-2', 'cfa-new', { heldFrom: '203.0.113.7' });
  await create('wh-3', 'cfa-refused', { heldFrom: '203.0.113.7' });
  await create('wh-4', 'cfa-old');
  const held = records.held();
  t.equal(await held.countFrom('203.0.113.7'), 3);
  t.same((await held.tenantsFrom('203.0.113.7', 10)).sort(), ['cfa-new', 'cfa-refused']);
  await held.unmark('cfa-new');
  t.equal(await held.countFrom('203.0.113.7'), 1);
  t.equal((await records.list('cfa-new')).length, 2, 'proven: kept');
  await held.dropRefused!('cfa-refused');
  t.same(await records.list('cfa-refused'), [], 'refused: removed');
  t.equal(await held.countFrom('203.0.113.7'), 0);
});
