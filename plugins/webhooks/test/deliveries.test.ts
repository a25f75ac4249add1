// The outbox and delivery log (deliveries.ts; D25, SPEC 2.8, 6.2) on the embedded store: an event's deliveries are
// written once, with the exact body that is signed, claimed only when due, raised to their webhook's revision, and
// shown, filtered, paged, resent and expired as the log's readers and the overdue sweep rely on.
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { createEmbeddedStore, type DomainEvent } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { Deliveries, deliveryId, toDeliveryRecord, type DeliveryRecord } from '../src/deliveries.js';

type Status = DeliveryRecord['status'];

async function setup(t: Test) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const deliveries = new Deliveries(store, clock, 'worker-a');
  await deliveries.prepare();
  const event = (id: string, changes: Partial<DomainEvent> = {}): DomainEvent => ({
    id,
    type: 'job.completed',
    tenant: 'cfa-a',
    opcoId: 'sandbox',
    timestamp: clock.date().toISOString(),
    data: { jobId: id },
    ...changes,
  });
  /** Records an event to one webhook and sets the delivery's fields as a worker would have left them. */
  const at = async (id: string, status: Status, changes: Partial<DomainEvent> = {}, webhookId = 'wh-1') => {
    const [recorded] = await deliveries.record(event(id, changes), [{ webhookId }], 0);
    const claimed = await deliveries.claim(recorded.id, 1000);
    await deliveries.leases.release(recorded.id, claimed!.token, { status });
    return recorded.id;
  };
  return { store, clock, deliveries, event, at };
}

t.test('an event is recorded once per subscriber, as the exact notification text, before any attempt', async (t) => {
  const { clock, deliveries, event } = await setup(t);
  const ev = event('ev-1', { data: { $where: 'x', 'a.b': [1, { c: null }], é: 'ü' } });
  const recorded = await deliveries.record(ev, [{ webhookId: 'wh-1', revision: 3 }, { webhookId: 'wh-2' }], 2000);
  const id = (webhookId: string) => createHash('sha256').update(`ev-1\n${webhookId}`).digest('hex').slice(0, 32);
  t.same(recorded, [
    { webhookId: 'wh-1', id: id('wh-1'), created: true },
    { webhookId: 'wh-2', id: id('wh-2'), created: true },
  ]);
  t.equal(deliveryId('ev-1', 'wh-1'), id('wh-1'));

  const stored = (await deliveries.get(id('wh-1')))!;
  const body =
    `{"event":"job.completed","opcoId":"sandbox","timestamp":"${ev.timestamp}",` +
    '"data":{"$where":"x","a.b":[1,{"c":null}],"é":"ü"}}';
  t.equal(stored.body, body, 'SPEC 6.2 body as text: keys a store refuses survive');
  t.match(stored, {
    eventId: 'ev-1',
    webhookId: 'wh-1',
    tenant: 'cfa-a',
    event: 'job.completed',
    status: 'pending',
    statusCode: null,
    attempts: 0,
    error: null,
    deliveredAt: null,
    leaseOwner: null,
    leaseUntil: null,
    webhookRevision: 3,
  });
  t.same(stored.createdAt, clock.date());
  t.same(stored.nextAttemptAt, new Date(clock.now() + 2000), 'due after the first delay');
  const bare = (await deliveries.get(id('wh-2')))!;
  t.notOk('webhookRevision' in bare, 'no revision given: its webhook is read at delivery');
});

t.test('an event emitted twice is stored once: its deliveries say they were there already', async (t) => {
  const { deliveries, event, store } = await setup(t);
  await deliveries.record(event('ev-1'), [{ webhookId: 'wh-1' }], 0);
  const twice = event('ev-1', { data: { changed: true } });
  const again = await deliveries.record(twice, [{ webhookId: 'wh-1' }, { webhookId: 'wh-2' }], 0);
  t.same(
    again.map((r) => [r.webhookId, r.created]),
    [
      ['wh-1', false],
      ['wh-2', true],
    ],
  );
  t.equal(await store.collection('webhook_deliveries').count({}), 2);
  t.same(JSON.parse((await deliveries.get(again[0].id))!.body).data, { jobId: 'ev-1' }, 'the first one kept');
});

t.test('a delivery is claimed only when due, unfinished and held by nobody', async (t) => {
  const { clock, deliveries, event, at } = await setup(t);
  const [early] = await deliveries.record(event('ev-early'), [{ webhookId: 'wh-1' }], 1000);
  t.equal(await deliveries.claim(early.id, 500), null, 'not due yet');
  await clock.advance(1000);
  const claimed = await deliveries.claim(early.id, 500);
  t.match(claimed, { takenOver: false, record: { _id: early.id, leaseOwner: claimed?.token } });
  t.match(claimed?.token, /^worker-a:/, 'the token names the worker');
  t.equal(await deliveries.claim(early.id, 500), null, 'held by a live lease');
  await clock.advance(500);
  t.match(await deliveries.claim(early.id, 500), { takenOver: true }, 'a lapsed lease is taken over');
  for (const status of ['delivered', 'failed'] as const) {
    t.equal(await deliveries.claim(await at(`ev-${status}`, status), 500), null, `${status}: finished`);
  }
  t.ok(await deliveries.claim(await at('ev-retrying', 'retrying'), 500), 'retrying is claimed');
  t.equal(await deliveries.claim('no-such-delivery', 500), null);
});

t.test("a webhook's change raises its unfinished deliveries to its revision, and those only", async (t) => {
  const { deliveries, event } = await setup(t);
  const [low] = await deliveries.record(event('ev-1'), [{ webhookId: 'wh-1', revision: 1 }], 0);
  const [high] = await deliveries.record(event('ev-2'), [{ webhookId: 'wh-1', revision: 9 }], 0);
  const [other] = await deliveries.record(event('ev-3'), [{ webhookId: 'wh-2', revision: 1 }], 0);
  const [bare] = await deliveries.record(event('ev-4'), [{ webhookId: 'wh-1' }], 0);
  const [done] = await deliveries.record(event('ev-5'), [{ webhookId: 'wh-1', revision: 1 }], 0);
  const claimed = await deliveries.claim(done.id, 1000);
  await deliveries.leases.release(done.id, claimed!.token, { status: 'delivered' });
  await deliveries.follow('wh-1', 5);
  const revision = async (id: string) => (await deliveries.get(id))?.webhookRevision;
  t.equal(await revision(low.id), 5, 'raised');
  t.equal(await revision(high.id), 9, 'never lowered');
  t.equal(await revision(other.id), 1, "another webhook's left");
  t.equal(await revision(bare.id), undefined, 'one that reads its webhook anyway is left');
  t.equal(await revision(done.id), 1, 'a finished one is left');
});

t.test('the log: newest first, retrying shows pending too, filtered, one tenant only, paged', async (t) => {
  const { clock, deliveries, at } = await setup(t);
  const start = clock.date();
  const ids: string[] = [];
  for (const [n, status] of (['pending', 'retrying', 'delivered', 'failed', 'delivered'] as const).entries()) {
    ids.push(await at(`ev-${n}`, status, n === 3 ? { type: 'job.failed' } : {}));
    await clock.advance(1000);
  }
  await at('ev-other', 'delivered', { tenant: 'cfa-b' });
  const page = async (query: Parameters<Deliveries['page']>[2], tenant = 'cfa-a') =>
    (await deliveries.page('wh-1', tenant, query)).records.map((r) => r._id);
  t.same(await page({}), [...ids].reverse());
  t.same(await page({ status: 'retrying' }), [ids[1], ids[0]], 'SPEC 2.8 has no pending: shown as retrying');
  t.same(await page({ status: 'delivered' }), [ids[4], ids[2]]);
  t.same(await page({ event: 'job.failed' }), [ids[3]]);
  t.same(await page({ since: new Date(start.getTime() + 3000) }), [ids[4], ids[3]]);
  t.same(await page({}, 'cfa-c'), [], 'another tenant sees none of them');
  const first = await deliveries.page('wh-1', 'cfa-a', { limit: 2 });
  const second = await deliveries.page('wh-1', 'cfa-a', { limit: 2, cursor: first.next });
  const third = await deliveries.page('wh-1', 'cfa-a', { limit: 2, cursor: second.next });
  t.same(
    [...first.records, ...second.records, ...third.records].map((r) => r._id),
    [...ids].reverse(),
  );
  t.equal(third.next, undefined, 'the last page says so');
  t.same((await deliveries.pageAll({ status: 'delivered' })).records.length, 3, 'operators see every tenant');
});

t.test('resend puts a finished delivery back on its way, same id and body, attempts from zero, due now', async (t) => {
  const { clock, deliveries, event, at } = await setup(t);
  const id = await at('ev-1', 'failed');
  const [recorded] = await deliveries.record(event('ev-2'), [{ webhookId: 'wh-1', revision: 2 }], 0);
  const claimed = await deliveries.claim(recorded.id, 1000);
  await deliveries.leases.release(recorded.id, claimed!.token, {
    status: 'delivered',
    attempts: 2,
    statusCode: 200,
    deliveredAt: clock.date(),
    expiresAt: new Date(clock.now() + 1000),
  });
  await clock.advance(5000);
  const before = (await deliveries.get(recorded.id))!;
  const resent = await deliveries.resend(recorded.id);
  t.match(resent, {
    _id: before._id,
    body: before.body,
    status: 'retrying',
    attempts: 0,
    statusCode: null,
    error: null,
    deliveredAt: null,
    leaseOwner: null,
  });
  t.same(resent?.nextAttemptAt, clock.date());
  t.notOk(resent && 'expiresAt' in resent, 'no longer expires');
  t.notOk(resent && 'webhookRevision' in resent, 'its webhook is read when it is sent');
  t.ok(await deliveries.resend(id), 'a failed one too');
  t.equal(await deliveries.resend(id), null, 'on its way already');
  t.equal(await deliveries.resend('no-such-delivery'), null);
});

t.test("failedSince: a webhook's failed deliveries since a date, oldest first, its tenant's only", async (t) => {
  const { clock, deliveries, at } = await setup(t);
  const old = await at('ev-0', 'failed');
  await clock.advance(1000);
  const since = clock.date();
  const a = await at('ev-1', 'failed');
  await at('ev-2', 'delivered');
  await clock.advance(1000);
  const b = await at('ev-3', 'failed');
  await at('ev-4', 'failed', { tenant: 'cfa-b' });
  await at('ev-5', 'failed', {}, 'wh-2');
  t.same(
    (await deliveries.failedSince('wh-1', 'cfa-a', since)).map((d) => d._id),
    [a, b],
  );
  t.same(
    (await deliveries.failedSince('wh-1', 'cfa-a', new Date(0))).map((d) => d._id),
    [old, a, b],
  );
});

t.test('overdue and dueSince find unfinished deliveries due and unheld: what lost its queue message', async (t) => {
  const { clock, deliveries, event, at } = await setup(t);
  t.equal(await deliveries.dueSince(), null, 'nothing waits');
  const start = clock.date();
  const [first] = await deliveries.record(event('ev-1'), [{ webhookId: 'wh-1' }], 0);
  await clock.advance(1000);
  const [second] = await deliveries.record(event('ev-2'), [{ webhookId: 'wh-1' }], 0);
  const [later] = await deliveries.record(event('ev-3'), [{ webhookId: 'wh-1' }], 60_000);
  await at('ev-4', 'delivered');
  t.same(
    (await deliveries.overdue(clock.date())).map((d) => d._id),
    [first.id, second.id],
    'most overdue first',
  );
  t.same(await deliveries.dueSince(), start);
  await deliveries.claim(first.id, 10_000);
  t.same(
    (await deliveries.overdue(clock.date())).map((d) => d._id),
    [second.id],
    'a held one is not lost',
  );
  t.notOk(
    (await deliveries.overdue(new Date(clock.now() + 59_999))).some((d) => d._id === later.id),
    'not due yet',
  );
});

t.test('sweepExpired deletes finished deliveries past their retention, nothing else', async (t) => {
  const { clock, deliveries, event } = await setup(t);
  const [kept] = await deliveries.record(event('ev-1'), [{ webhookId: 'wh-1' }], 0);
  const [ended] = await deliveries.record(event('ev-2'), [{ webhookId: 'wh-1' }], 0);
  const claimed = await deliveries.claim(ended.id, 1000);
  const expiresAt = new Date(clock.now() + 10_000);
  await deliveries.leases.release(ended.id, claimed!.token, { status: 'failed', expiresAt });
  await clock.advance(9_999);
  t.equal(await deliveries.sweepExpired(), 0, 'not before its time');
  await clock.advance(1);
  t.equal(await deliveries.sweepExpired(), 1);
  t.equal(await deliveries.get(ended.id), null);
  t.ok(await deliveries.get(kept.id), 'an unfinished one never expires');
});

t.test('SPEC 2.8 view: a pending delivery shows as retrying with 0 attempts, its body as payload', async (t) => {
  const { clock, deliveries, event, at } = await setup(t);
  const [pending] = await deliveries.record(event('ev-1'), [{ webhookId: 'wh-1' }], 0);
  const shown = toDeliveryRecord((await deliveries.get(pending.id))!);
  t.same(shown, {
    id: pending.id,
    webhookId: 'wh-1',
    event: 'job.completed',
    status: 'retrying',
    statusCode: null,
    attempts: 0,
    error: null,
    deliveredAt: null,
    payload: {
      event: 'job.completed',
      opcoId: 'sandbox',
      timestamp: clock.date().toISOString(),
      data: { jobId: 'ev-1' },
    },
  });
  const delivered = (await deliveries.get(await at('ev-2', 'delivered')))!;
  const record = toDeliveryRecord({ ...delivered, deliveredAt: clock.date(), statusCode: 200, attempts: 1 });
  t.match(record, { status: 'delivered', statusCode: 200, attempts: 1, deliveredAt: clock.date().toISOString() });
});
