/**
 * D25: domain events become delivery records in the Store before any attempt, fanned out to the
 * tenant's active webhooks subscribed to the event type (SPEC 6.3 rule 4): one insert for all
 * of an event's deliveries. A record whose queue message was lost (a crash between the writes
 * and the publish, or the in-memory queue after a restart) is found by its due date and queued
 * again.
 */
import type { DomainEvent, Logger } from '@opco-proxy/core';
import type { Deliveries, Subscriber } from './deliveries.js';
import type { DeliveryWorker } from './delivery.js';
import { DELETED_REVISION, type WebhookRecord, type WebhookRecords } from './webhook-records.js';

export interface OutboxDeps {
  deliveries: Deliveries;
  records: WebhookRecords;
  worker: Pick<DeliveryWorker, 'schedule' | 'holds'>;
  log: Logger;
  firstDelayMs: number;
}

export async function fanOut(deps: OutboxDeps, event: DomainEvent): Promise<number> {
  const webhooks = await deps.records.subscribers(event.tenant, event.type);
  if (webhooks.length === 0) return 0;
  const subscribers = webhooks.map((w) => ({ webhookId: w._id, revision: w.revision ?? 0 }));
  const recorded = await deps.deliveries.record(event, subscribers, deps.firstDelayMs);
  await followChanges(deps, event.tenant, subscribers);
  const destinations = new Map(webhooks.map((w) => [w._id, w]));
  const created = recorded.filter((delivery) => delivery.created);
  // The records are safe in the store; a publish that fails is `requeueOverdue`'s to redo.
  await Promise.all(
    created.map((delivery) =>
      deps.worker
        .schedule(delivery.id, deps.firstDelayMs, destinations.get(delivery.webhookId))
        .catch((err) => deps.log.warn({ err, deliveryId: delivery.id }, 'delivery not queued yet')),
    ),
  );
  return created.length;
}

/**
 * A webhook changed between the read of the subscribers and the insert of the deliveries: its
 * change may have raised its deliveries' revision before these existed, so they are raised here,
 * before any is queued (see known-webhooks.ts). Usually nothing changed: one read.
 */
async function followChanges(deps: OutboxDeps, tenant: string, subscribers: Required<Subscriber>[]): Promise<void> {
  const now = await deps.records.revisions(
    subscribers.map((s) => s.webhookId),
    tenant,
  );
  for (const { webhookId, revision } of subscribers) {
    const current = now.get(webhookId) ?? DELETED_REVISION;
    if (current !== revision) await deps.deliveries.follow(webhookId, current);
  }
}

/**
 * Queues again the deliveries due before `dueBefore` that nobody holds. Those waiting for their
 * turn in this worker are due and unclaimed too, but not lost: queued again, each cost a read, a
 * publish and a receipt for nothing (half the deliveries of a 2,000-delivery burst).
 */
export async function requeueOverdue(deps: OutboxDeps, dueBefore: Date): Promise<number> {
  const overdue = (await deps.deliveries.overdue(dueBefore)).filter((delivery) => !deps.worker.holds(delivery._id));
  const webhooks = new Map<string, Promise<WebhookRecord | null>>();
  for (const delivery of overdue) {
    // With its tenant and destination, so a backlog that waited its turn for longer than the
    // grace goes back to its tenant's lines, not ahead of the other tenants.
    const key = `${delivery.tenant}/${delivery.webhookId}`;
    let webhook = webhooks.get(key);
    if (!webhook) webhooks.set(key, (webhook = deps.records.get(delivery.webhookId, delivery.tenant)));
    await deps.worker.schedule(delivery._id, 0, (await webhook) ?? undefined);
  }
  return overdue.length;
}
