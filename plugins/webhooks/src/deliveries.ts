/**
 * The outbox (D25) and the delivery log (SPEC 2.8) are one collection: each domain event is
 * written here, once per subscribed webhook, before any attempt is made, and every attempt is
 * recorded on the same document. The id is derived from the event and the webhook, so an
 * event emitted twice is stored once, and it is the `Svc-Delivery-Id` receivers de-duplicate on.
 */
import { DuplicateKeyError, sha256Hex, type Collection, type DomainEvent, type Store } from '@opco-proxy/core';

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface Notification {
  event: string;
  opcoId: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface DeliveryRecord {
  _id: string;
  eventId: string;
  webhookId: string;
  tenant: string;
  event: string;
  payload: Notification;
  status: DeliveryStatus;
  statusCode: number | null;
  attempts: number;
  error: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
  nextAttemptAt: Date;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  expiresAt?: Date;
}

export class Deliveries {
  readonly deliveries: Collection<DeliveryRecord>;

  constructor(store: Store) {
    this.deliveries = store.collection<DeliveryRecord>('webhook_deliveries');
  }

  async prepare(): Promise<void> {
    await this.deliveries.createIndex({ webhookId: 1, tenant: 1, createdAt: -1 });
    await this.deliveries.createIndex({ status: 1, nextAttemptAt: 1 });
  }

  /** Writes the delivery unless this event already has one for this webhook; returns its id. */
  async record(event: DomainEvent, webhookId: string, firstDelayMs: number): Promise<{ id: string; created: boolean }> {
    const id = deliveryId(event.id, webhookId);
    const now = new Date();
    try {
      await this.deliveries.insertOne({
        _id: id, eventId: event.id, webhookId, tenant: event.tenant, event: event.type,
        payload: { event: event.type, opcoId: event.opcoId, timestamp: event.timestamp, data: event.data },
        status: 'pending', statusCode: null, attempts: 0, error: null, deliveredAt: null,
        createdAt: now, nextAttemptAt: new Date(now.getTime() + firstDelayMs), leaseOwner: null, leaseUntil: null,
      });
      return { id, created: true };
    } catch (err) {
      if (err instanceof DuplicateKeyError) return { id, created: false };
      throw err;
    }
  }

  /** Takes the delivery for one attempt, if it is due, unfinished and nobody else holds it. */
  claim(id: string, owner: string, leaseMs: number): Promise<DeliveryRecord | null> {
    const now = new Date();
    return this.deliveries.findOneAndUpdate(
      { _id: id, status: { $in: ['pending', 'retrying'] }, nextAttemptAt: { $lte: now }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
      { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) } },
    );
  }

  settle(id: string, owner: string, changes: Partial<DeliveryRecord>): Promise<DeliveryRecord | null> {
    return this.deliveries.findOneAndUpdate({ _id: id, leaseOwner: owner }, { $set: { ...changes, leaseOwner: null, leaseUntil: null } });
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id });
  }

  forWebhook(webhookId: string, tenant: string, limit = 100): Promise<DeliveryRecord[]> {
    return this.deliveries.find({ webhookId, tenant }, { sort: { createdAt: -1 }, limit });
  }

  /** Unfinished deliveries due for `graceMs` with no live lease: their message may be lost. */
  overdue(graceMs: number, limit = 500): Promise<DeliveryRecord[]> {
    const now = Date.now();
    return this.deliveries.find(
      { status: { $in: ['pending', 'retrying'] }, nextAttemptAt: { $lte: new Date(now - graceMs) }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: new Date(now) } }] },
      { sort: { nextAttemptAt: 1 }, limit },
    );
  }
}

export function deliveryId(eventId: string, webhookId: string): string {
  return sha256Hex(`${eventId}\n${webhookId}`).slice(0, 32);
}

/** SPEC 2.8. A delivery not yet attempted shows as `retrying` with 0 attempts: it is under way. */
export function toDeliveryRecord(delivery: DeliveryRecord): Record<string, unknown> {
  return {
    id: delivery._id,
    webhookId: delivery.webhookId,
    event: delivery.event,
    payload: delivery.payload,
    status: delivery.status === 'pending' ? 'retrying' : delivery.status,
    statusCode: delivery.statusCode,
    attempts: delivery.attempts,
    error: delivery.error,
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  };
}
