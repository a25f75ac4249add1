// The outbox (D25, outbox.ts) on the embedded store and queue: an event is written to the store once per subscribed
// webhook (SPEC 6.3 rule 4) before it is queued, at the revision its webhook has then; the overdue sweep queues again
// the due deliveries nobody holds, and leaves those waiting for their turn in this worker (due, unclaimed, not lost).
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { createEmbeddedQueue, createEmbeddedStore, createLogger } from '@opco-proxy/core';
import { createSealer } from '@opco-proxy/core/application';
import { type DomainEvent } from '@opco-proxy/core';
import { RetryPolicy } from '@opco-proxy/core/durable';
import { TestClock } from '@opco-proxy/core/testing';
import { Deliveries, deliveryId } from '../src/deliveries.js';
import { DELETED_REVISION, WebhookRecords } from '../src/webhook-records.js';
import { KnownWebhooks } from '../src/known-webhooks.js';
import { fanOut, requeueOverdue } from '../src/outbox.js';
import { DELIVERY_QUEUE, DeliveryWorker, type Destination } from '../src/delivery.js';

t.test('the overdue sweep queues what nobody holds, once per delivery, and reads each webhook once', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const deliveries = new Deliveries(store, clock, 'worker-a');
  const records = new WebhookRecords(store, createSealer(randomBytes(32)));
  for (const [id, tenant] of [
    ['wh-1', 'cfa-a'],
    ['wh-2', 'cfa-b'],
  ]) {
    await records.create({
      _id: id,
      tenant,
      callbackUrl: `https://${tenant}.example/hook`,
      events: ['job.completed'],
      secret: 's',
      active: true,
      createdAt: clock.date(),
    });
  }
  const event = (n: number, tenant: string): DomainEvent => ({
    id: `ev-${n}`,
    type: 'job.completed',
    tenant,
    opcoId: 'sandbox',
    timestamp: clock.date().toISOString(),
    data: { n },
  });
  const recorded = [
    ...(await deliveries.record(event(1, 'cfa-a'), [{ webhookId: 'wh-1' }], 0)),
    ...(await deliveries.record(event(2, 'cfa-a'), [{ webhookId: 'wh-1' }], 0)),
    ...(await deliveries.record(event(3, 'cfa-b'), [{ webhookId: 'wh-2' }], 0)),
    ...(await deliveries.record(event(4, 'cfa-a'), [{ webhookId: 'wh-1' }], 0)),
  ];
  const held = new Set([recorded[1].id]);
  const scheduled: { id: string; to?: Destination }[] = [];
  const worker = {
    holds: (id: string) => held.has(id),
    schedule: async (id: string, _delayMs: number, to?: Destination) => void scheduled.push({ id, to }),
  };
  let reads = 0;
  const counted = Object.assign(Object.create(records) as WebhookRecords, {
    get: (id: string, tenant: string) => {
      reads++;
      return records.get(id, tenant);
    },
  });
  await clock.advance(1000);

  const deps = { deliveries, records: counted, worker, log: console as never, firstDelayMs: 0 };
  const count = await requeueOverdue(deps, clock.date());
  t.equal(count, 3, 'three queued again');
  const expected = [recorded[0].id, recorded[2].id, recorded[3].id].sort();
  t.same(scheduled.map((s) => s.id).sort(), expected, 'not the one waiting for its turn here');
  for (const { id, to } of scheduled) {
    const tenant = id === recorded[2].id ? 'cfa-b' : 'cfa-a';
    t.match(to, { tenant, callbackUrl: `https://${tenant}.example/hook` }, `${id} goes back to its tenant's line`);
  }
  t.equal(reads, 2, 'each webhook read once');
});

/** The outbox as the plugin builds it (index.ts), its worker not started: a consumer here reads what it queues. */
async function outbox(t: Test, firstDelayMs = 2000) {
  const store = await createEmbeddedStore({});
  const clock = new TestClock({ frozen: true });
  const queue = createEmbeddedQueue({ clock });
  t.teardown(async () => {
    await queue.close();
    await store.close();
  });
  const log = createLogger({ level: 'silent' });
  const deliveries = new Deliveries(store, clock, 'worker-a');
  const records = new WebhookRecords(store, createSealer(randomBytes(32)));
  const known = new KnownWebhooks(records, clock);
  records.followChanges((id, revision) => {
    known.forget(id);
    return deliveries.follow(id, revision);
  });
  const worker = new DeliveryWorker({
    deliveries,
    records,
    known,
    queue,
    log,
    clock,
    attempts: { inc: () => {} },
    mode: 'production',
    resolveHost: async () => [],
    timeoutMs: 10_000,
    retries: new RetryPolicy(4, [1000, 5000, 15_000]),
    concurrency: 4,
    retentionMs: 1000,
    emit: async () => {},
  });
  const messages: unknown[] = [];
  await queue.consume(DELIVERY_QUEUE, async (m) => void messages.push(m.body));
  const create = (id: string, tenant: string, events: string[], callbackUrl: string, active = true) =>
    records.create({ _id: id, tenant, callbackUrl, events, secret: 'a1'.repeat(32), active, createdAt: clock.date() });
  const event = (id: string, type: DomainEvent['type'] = 'job.completed', tenant = 'cfa-a'): DomainEvent => ({
    id,
    type,
    tenant,
    opcoId: 'sandbox',
    timestamp: clock.date().toISOString(),
    data: { jobId: id },
  });
  const stored = store.collection('webhook_deliveries');
  const deps = { deliveries, records, worker, log, firstDelayMs };
  return { clock, queue, deliveries, records, messages, create, event, stored, deps };
}

t.test(
  "fanOut writes an event to its tenant's active subscribed webhooks, then queues it after the first delay",
  async (t) => {
    const { clock, queue, deliveries, messages, create, event, stored, deps } = await outbox(t);
    await create('wh-a', 'cfa-a', ['job.completed'], 'https://a.example:8443/hook');
    await create('wh-b', 'cfa-a', ['job.failed', 'job.completed'], 'https://b.example/hook');
    await create('wh-failed', 'cfa-a', ['job.failed'], 'https://c.example/hook');
    await create('wh-off', 'cfa-a', ['job.completed'], 'https://d.example/hook', false);
    await create('wh-other', 'cfa-b', ['job.completed'], 'https://e.example/hook');

    t.equal(await fanOut(deps, event('ev-1')), 2);
    t.equal(await stored.count({}), 2, 'in the store before any attempt');
    for (const id of ['wh-a', 'wh-b']) {
      const written = await deliveries.get(deliveryId('ev-1', id));
      t.match(written, { webhookId: id, status: 'pending', attempts: 0, webhookRevision: 0 }, id);
    }
    t.match(await queue.depth(DELIVERY_QUEUE), { ready: 0, delayed: 2 }, 'queued with the first delay');
    await clock.advance(1999);
    t.same(messages, [], 'not before the first delay');
    await clock.advance(1);
    const byOrigin = (m: unknown) => (m as { origin: string }).origin;
    t.same(
      messages.sort((a, b) => byOrigin(a).localeCompare(byOrigin(b))),
      [
        { deliveryId: deliveryId('ev-1', 'wh-a'), tenant: 'cfa-a', origin: 'https://a.example:8443' },
        { deliveryId: deliveryId('ev-1', 'wh-b'), tenant: 'cfa-a', origin: 'https://b.example' },
      ],
      "each with its tenant and destination, for the worker's turns",
    );
  },
);

t.test('fanOut of an event emitted twice writes and queues it once; of an event nobody wants, nothing', async (t) => {
  const { clock, messages, create, event, stored, deps } = await outbox(t, 0);
  await create('wh-a', 'cfa-a', ['job.completed'], 'https://a.example/hook');
  t.equal(await fanOut(deps, event('ev-1')), 1);
  t.equal(await fanOut(deps, event('ev-1')), 0, 'the second time');
  t.equal(await fanOut(deps, event('ev-2', 'sync.started')), 0, 'no subscriber');
  t.equal(await fanOut(deps, event('ev-3', 'job.completed', 'cfa-b')), 0, 'another tenant');
  await clock.advance(0);
  t.equal(await stored.count({}), 1);
  t.same(messages, [{ deliveryId: deliveryId('ev-1', 'wh-a'), tenant: 'cfa-a', origin: 'https://a.example' }]);
});

t.test(
  'a webhook changed while fanOut wrote its deliveries: they carry the change before they are queued',
  async (t) => {
    const { deliveries, records, create, event, deps } = await outbox(t);
    for (const id of ['wh-same', 'wh-moved', 'wh-gone']) {
      await create(id, 'cfa-a', ['job.completed'], `https://${id}.example/h`);
    }
    // The changes land between the read of the subscribers and the insert: their follow found no delivery to raise.
    const racing = Object.assign(Object.create(records) as WebhookRecords, {
      subscribers: async (tenant: string, type: string) => {
        const found = await records.subscribers(tenant, type);
        await records.update('wh-moved', 'cfa-a', { callbackUrl: 'https://elsewhere.example/h' });
        await records.remove('wh-gone', 'cfa-a');
        return found;
      },
    });
    t.equal(await fanOut({ ...deps, records: racing }, event('ev-1')), 3);
    const revision = async (id: string) => (await deliveries.get(deliveryId('ev-1', id)))?.webhookRevision;
    t.equal(await revision('wh-same'), 0);
    t.equal(await revision('wh-moved'), 1, "raised to the new URL's revision: no worker sends it from an older copy");
    t.equal(await revision('wh-gone'), DELETED_REVISION, "a deleted webhook's delivery can never be sent");
  },
);

t.test('a queue that refuses the message loses nothing: the delivery waits in the store for the sweep', async (t) => {
  const { clock, queue, deliveries, create, event, deps } = await outbox(t, 0);
  await create('wh-a', 'cfa-a', ['job.completed'], 'https://a.example/hook');
  await queue.close();
  t.equal(await fanOut(deps, event('ev-1')), 1, 'recorded all the same');
  await clock.advance(30_000);
  const overdue = await deliveries.overdue(clock.date());
  t.same(
    overdue.map((d) => d._id),
    [deliveryId('ev-1', 'wh-a')],
    'found by the sweep',
  );
});
