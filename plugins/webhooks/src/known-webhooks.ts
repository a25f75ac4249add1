/**
 * The delivery worker's copies of webhook records, so that a delivery costs no read of its
 * webhook (issue 11): the claim and the release are its only store commands.
 *
 * A copy is used only when the delivery says it is current. Every change of a webhook record
 * increments its `revision`, then raises `webhookRevision` on the webhook's unfinished deliveries
 * to it (`Deliveries.follow`) before the change is answered; the outbox writes an event's
 * deliveries with the revisions it read, then reads them again and raises those that changed
 * meanwhile before it queues any (outbox.ts). So once a change has been answered, every
 * unfinished delivery of its webhook carries at least its revision, and a copy whose revision is
 * at least the delivery's is the record as it is now: a deleted or switched-off webhook, a new
 * URL or a rotated secret holds for every delivery claimed after the change answered, on every
 * instance. A delivery without the field (older records, resends, test events) has its webhook
 * read. A copy is also read again once MAX_AGE_MS old: that bounds what a change cut off between
 * its two writes (a store failure or a crash in between) or FerretDB's non-atomic update (an
 * updateMany can lose a race with a worker's write to the same delivery) could leave stale.
 */
import type { Clock } from '@opco-proxy/core';
import type { DeliveryRecord } from './deliveries.js';
import type { UnsealedSecrets, WebhookRecord, WebhookRecords } from './webhook-records.js';

/** A copy is read again past this age, whatever the deliveries say. */
export const MAX_AGE_MS = 10_000;
/** Webhooks remembered at most; the least recently used is forgotten first. */
const MAX_WEBHOOKS = 1000;

export interface KnownWebhook {
  webhook: WebhookRecord;
  secrets: UnsealedSecrets;
}

interface Copy extends KnownWebhook {
  revision: number;
  readAt: number;
}

export class KnownWebhooks {
  private readonly copies = new Map<string, Copy>();

  constructor(
    private readonly records: WebhookRecords,
    private readonly clock: Clock,
  ) {}

  /** The webhook of a claimed delivery and its secrets, or null when it was deleted. */
  async of(delivery: Pick<DeliveryRecord, 'webhookId' | 'tenant' | 'webhookRevision'>): Promise<KnownWebhook | null> {
    const copy = this.copies.get(delivery.webhookId);
    if (copy && this.current(copy, delivery)) {
      // Most recently used last, so the first one is the one to forget.
      this.copies.delete(delivery.webhookId);
      this.copies.set(delivery.webhookId, copy);
      return copy;
    }
    const readAt = this.clock.now();
    const webhook = await this.records.get(delivery.webhookId, delivery.tenant);
    if (!webhook) {
      this.copies.delete(delivery.webhookId);
      return null;
    }
    const fresh: Copy = {
      webhook,
      secrets: this.records.unsealedSecrets(webhook),
      revision: webhook.revision ?? 0,
      readAt,
    };
    const kept = this.copies.get(webhook._id);
    // Of two reads that crossed, the newer revision stays.
    if (!kept || kept.revision <= fresh.revision) this.remember(fresh);
    return fresh;
  }

  /** A change made by this process: its copy goes at once (the deliveries' revisions would tell too). */
  forget(webhookId: string): void {
    this.copies.delete(webhookId);
  }

  private current(copy: Copy, delivery: Pick<DeliveryRecord, 'tenant' | 'webhookRevision'>): boolean {
    return (
      delivery.webhookRevision !== undefined &&
      copy.revision >= delivery.webhookRevision &&
      copy.webhook.tenant === delivery.tenant &&
      this.clock.now() - copy.readAt < MAX_AGE_MS
    );
  }

  private remember(copy: Copy): void {
    this.copies.delete(copy.webhook._id);
    this.copies.set(copy.webhook._id, copy);
    if (this.copies.size > MAX_WEBHOOKS) this.copies.delete(this.copies.keys().next().value!);
  }
}
