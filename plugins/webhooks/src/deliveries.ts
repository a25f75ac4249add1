/**
 * The outbox (D25) and the delivery log (SPEC 2.8) are one collection: each domain event is
 * written here, once per subscribed webhook, before any attempt is made, and every attempt is
 * recorded on the same document. The id is derived from the event and the webhook, so an event
 * emitted twice is stored once, and it is the `Svc-Delivery-Id` receivers de-duplicate on. The
 * notification is kept as the exact JSON text that is signed and sent: its data come from
 * upstreams and are not the store's to parse. Attempts are leased with the durable-work kit.
 * An event's deliveries are written in one insert, each with the revision of its webhook the
 * outbox read, which the webhook's later changes raise (`follow`; see known-webhooks.ts).
 */
import { sha256Hex, type Clock, type Collection, type DomainEvent, type Store } from '@opco-proxy/core';
import { LeasedRecords, unleased, type Claimed, type Leased } from '@opco-proxy/core/durable';
import { newestFirst, type Page } from '@opco-proxy/core/durable';
import type { WebhookDelivery } from '@opco-proxy/schemas';

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface DeliveryRecord extends Leased {
  eventId: string;
  webhookId: string;
  tenant: string;
  event: string;
  /** The notification body (SPEC 6.2) exactly as signed and sent. */
  body: string;
  status: DeliveryStatus;
  statusCode: number | null;
  attempts: number;
  error: string | null;
  deliveredAt: Date | null;
  createdAt: Date;
  expiresAt?: Date;
  /**
   * While unfinished, at least the revision of its webhook (raised by every change of the
   * webhook); absent on deliveries whose webhook must be read (older records, resends, tests).
   */
  webhookRevision?: number;
}

/** A webhook an event goes to, and its revision as the outbox read it (absent: read it at delivery). */
export interface Subscriber {
  webhookId: string;
  revision?: number;
}

export interface Recorded {
  webhookId: string;
  id: string;
  /** False when the event already had a delivery to this webhook (an event emitted twice). */
  created: boolean;
}

const UNFINISHED_STATUSES = ['pending', 'retrying'] as const;
const UNFINISHED = { status: { $in: UNFINISHED_STATUSES } };

export class Deliveries {
  private readonly deliveries: Collection<DeliveryRecord>;
  readonly leases: LeasedRecords<DeliveryRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
    owner: string,
  ) {
    this.deliveries = store.collection<DeliveryRecord>('webhook_deliveries');
    this.leases = new LeasedRecords(this.deliveries, clock, owner);
  }

  /**
   * Search hints, skipped by the embedded store (IndexOptions). Claims go by `_id`. A datafile
   * written by an earlier version keeps them (nedb recreates its indexes on load): upkeep, not
   * a change of results.
   */
  async prepare(): Promise<void> {
    await this.deliveries.createIndex({ webhookId: 1, tenant: 1, createdAt: -1 });
    await this.deliveries.createIndex({ status: 1, nextAttemptAt: 1 });
    await this.deliveries.createIndex({ status: 1, createdAt: -1 });
  }

  /** Writes the event's delivery to each subscriber, in one insert, unless it has one already. */
  async record(event: DomainEvent, subscribers: Subscriber[], firstDelayMs: number): Promise<Recorded[]> {
    const now = this.clock.date();
    const body = JSON.stringify({
      event: event.type,
      opcoId: event.opcoId,
      timestamp: event.timestamp,
      data: event.data,
    });
    const docs: DeliveryRecord[] = subscribers.map(({ webhookId, revision }) => ({
      _id: deliveryId(event.id, webhookId),
      eventId: event.id,
      webhookId,
      tenant: event.tenant,
      event: event.type,
      body,
      status: 'pending',
      statusCode: null,
      attempts: 0,
      error: null,
      deliveredAt: null,
      createdAt: now,
      ...unleased(new Date(now.getTime() + firstDelayMs)),
      ...(revision !== undefined && { webhookRevision: revision }),
    }));
    const { duplicates } = await this.deliveries.insertMany(docs);
    const held = new Set(duplicates);
    return docs.map((doc) => ({ webhookId: doc.webhookId, id: doc._id, created: !held.has(doc._id) }));
  }

  /**
   * A webhook changed (or was deleted: DELETED_REVISION): its unfinished deliveries carry at
   * least its new revision from now on, so no worker sends them from an older copy.
   */
  async follow(webhookId: string, revision: number): Promise<void> {
    await this.deliveries.updateMany(
      { webhookId, ...UNFINISHED, webhookRevision: { $lt: revision } },
      { $set: { webhookRevision: revision } },
    );
  }

  /** Takes the delivery for one attempt, if it is due, unfinished and nobody else holds it. */
  claim(id: string, leaseMs: number): Promise<Claimed<DeliveryRecord> | null> {
    return this.leases.claim({ _id: id, ...UNFINISHED }, leaseMs);
  }

  get(id: string): Promise<DeliveryRecord | null> {
    return this.deliveries.findOne({ _id: id });
  }

  /**
   * A page of a webhook's deliveries, newest first (P10): filtered by status (`retrying` shows
   * pending ones too, as SPEC 2.8 has no `pending`), event and creation time; `cursor` is the
   * `next` of the previous page.
   */
  page(webhookId: string, tenant: string, query: LogQuery): Promise<Page<DeliveryRecord>> {
    const filter: Record<string, unknown> = { webhookId, tenant, ...statusFilter(query.status) };
    if (query.event) filter.event = query.event;
    if (query.since) filter.createdAt = { $gte: query.since };
    return newestFirst(this.deliveries, filter, 'createdAt', { limit: query.limit ?? 100, cursor: query.cursor });
  }

  /** Every tenant's deliveries, newest first, for operators (P9). */
  pageAll(query: { status: DeliveryQueryStatus; limit?: number; cursor?: string }): Promise<Page<DeliveryRecord>> {
    return newestFirst(this.deliveries, statusFilter(query.status), 'createdAt', query);
  }

  /**
   * Puts a delivered or failed delivery back on its way (P10): same id and body, attempts from
   * zero, due now. Null when it is not finished (it is on its way already) or does not exist.
   */
  resend(deliveryId: string): Promise<DeliveryRecord | null> {
    return this.leases.revoke(
      { _id: deliveryId, status: { $in: ['delivered', 'failed'] } },
      {
        status: 'retrying',
        attempts: 0,
        statusCode: null,
        error: null,
        deliveredAt: null,
        nextAttemptAt: this.clock.date(),
      },
      // Finished deliveries are not followed: a resent one has its webhook read.
      { unset: ['expiresAt', 'webhookRevision'] },
    );
  }

  /** Failed deliveries of a webhook created since `since`, oldest first. */
  failedSince(webhookId: string, tenant: string, since: Date, limit = 1000): Promise<DeliveryRecord[]> {
    return this.deliveries.find(
      { webhookId, tenant, status: 'failed', createdAt: { $gte: since } },
      { sort: { createdAt: 1 }, limit },
    );
  }

  /** Since when the most overdue unfinished delivery has been due (the delivery lag); null when none. */
  dueSince(): Promise<Date | null> {
    return this.leases.dueSince(UNFINISHED);
  }

  /** Unfinished deliveries due at `dueBefore` or earlier with no live lease: their message may be lost. */
  overdue(dueBefore: Date): Promise<DeliveryRecord[]> {
    return this.leases.overdue(UNFINISHED, dueBefore);
  }

  sweepExpired(): Promise<number> {
    return this.deliveries.sweepExpired(this.clock.date());
  }
}

export interface LogQuery {
  status?: DeliveryQueryStatus;
  event?: string;
  since?: Date;
  limit?: number;
  cursor?: string;
}

type DeliveryQueryStatus = 'delivered' | 'retrying' | 'failed';

/** SPEC 2.8 has no `pending`: `retrying` shows the deliveries not yet attempted too. */
function statusFilter(status: DeliveryQueryStatus | undefined): Record<string, unknown> {
  if (!status) return {};
  return { status: status === 'retrying' ? { $in: ['pending', 'retrying'] } : status };
}

export function deliveryId(eventId: string, webhookId: string): string {
  return sha256Hex(`${eventId}\n${webhookId}`).slice(0, 32);
}

/** SPEC 2.8. A delivery not yet attempted shows as `retrying` with 0 attempts: it is under way. */
export function toDeliveryRecord(delivery: DeliveryRecord): WebhookDelivery {
  return {
    id: delivery._id,
    webhookId: delivery.webhookId,
    event: delivery.event as WebhookDelivery['event'],
    payload: JSON.parse(delivery.body) as WebhookDelivery['payload'],
    status: delivery.status === 'pending' ? 'retrying' : delivery.status,
    statusCode: delivery.statusCode,
    attempts: delivery.attempts,
    error: delivery.error,
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  };
}
