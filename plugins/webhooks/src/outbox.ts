/**
 * D25: domain events become delivery records in the Store before any attempt, fanned out to the
 * tenant's active webhooks subscribed to the event type (SPEC 6.3 rule 4). A record whose queue
 * message was lost (a crash between the two writes, or the in-memory queue after a restart) is
 * found by its due date and queued again.
 */
import type { DomainEvent, Logger } from '@opco-proxy/core';
import type { Deliveries } from './deliveries.js';
import type { DeliveryWorker } from './delivery.js';
import type { WebhookRecords } from './webhook-records.js';

export interface OutboxDeps {
  deliveries: Deliveries;
  records: WebhookRecords;
  worker: DeliveryWorker;
  log: Logger;
  firstDelayMs: number;
}

export async function fanOut(deps: OutboxDeps, event: DomainEvent): Promise<number> {
  const subscribers = await deps.records.subscribers(event.tenant, event.type);
  let created = 0;
  for (const webhook of subscribers) {
    const delivery = await deps.deliveries.record(event, webhook._id, deps.firstDelayMs);
    if (!delivery.created) continue;
    created += 1;
    // The record is safe in the store; if this publish fails, `requeueOverdue` finds it.
    await deps.worker.schedule(delivery.id, deps.firstDelayMs, webhook.callbackUrl).catch((err) => deps.log.warn({ err, deliveryId: delivery.id }, 'delivery not queued yet'));
  }
  return created;
}

export async function requeueOverdue(deps: OutboxDeps, graceMs: number): Promise<number> {
  const overdue = await deps.deliveries.overdue(graceMs);
  for (const delivery of overdue) {
    // With its destination, so a backlog waiting in a slow receiver's lane for longer than the
    // grace goes back to that lane, not into the queue slots the other destinations share.
    const webhook = await deps.records.get(delivery.webhookId, delivery.tenant);
    await deps.worker.schedule(delivery._id, 0, webhook?.callbackUrl);
  }
  return overdue.length;
}
