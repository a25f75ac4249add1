// The overdue sweep (D25, outbox.ts) on the embedded store: it queues again the due deliveries
// nobody holds, with their tenant and destination, and leaves those waiting for their turn in
// this worker (a burst's backlog is due and unclaimed, not lost).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createEmbeddedStore, createSealer, TestClock, type DomainEvent } from '@opco-proxy/core';
import { Deliveries } from '../src/deliveries.js';
import { WebhookRecords } from '../src/webhook-records.js';
import { requeueOverdue } from '../src/outbox.js';
import type { Destination } from '../src/delivery.js';

t.test('the overdue sweep queues what nobody holds, once per delivery, and reads each webhook once', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const deliveries = new Deliveries(store, clock, 'worker-a');
  const records = new WebhookRecords(store, createSealer(randomBytes(32)));
  for (const [id, tenant] of [['wh-1', 'cfa-a'], ['wh-2', 'cfa-b']]) {
    await records.create({ _id: id, tenant, callbackUrl: `https://${tenant}.example/hook`, events: ['job.completed'], secret: 's', active: true, createdAt: clock.date() });
  }
  const event = (n: number, tenant: string): DomainEvent => ({ id: `ev-${n}`, type: 'job.completed', tenant, opcoId: 'sandbox', timestamp: clock.date().toISOString(), data: { n } });
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

  const count = await requeueOverdue({ deliveries, records: counted, worker, log: console as never, firstDelayMs: 0 }, clock.date());
  t.equal(count, 3, 'three queued again');
  t.same(scheduled.map((s) => s.id).sort(), [recorded[0].id, recorded[2].id, recorded[3].id].sort(), 'not the one waiting for its turn here');
  for (const { id, to } of scheduled) {
    const tenant = id === recorded[2].id ? 'cfa-b' : 'cfa-a';
    t.match(to, { tenant, callbackUrl: `https://${tenant}.example/hook` }, `${id} goes back to its tenant's line`);
  }
  t.equal(reads, 2, 'each webhook read once');
});
