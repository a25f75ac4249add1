/**
 * Webhooks (SPEC 2.7, 4.15, D9) in the Store. The secret is sealed under the master key: the
 * service needs it back to sign, but a store dump must not hand it out. A tenant's webhooks
 * occupy numbered slots under a unique (tenant, slot) index, so even concurrent creations on
 * several instances can never give a tenant more than 20.
 */
import { DuplicateKeyError, createError, type Collection, type Sealed, type Sealer, type Store } from '@opco-proxy/core';
import type { Webhook } from '@opco-proxy/schemas';

export const MAX_WEBHOOKS_PER_TENANT = 20;

export interface WebhookRecord {
  _id: string;
  tenant: string;
  slot: number;
  callbackUrl: string;
  events: string[];
  secret: Sealed;
  active: boolean;
  description?: string;
  createdAt: Date;
}

export type WebhookChanges = Partial<Pick<WebhookRecord, 'callbackUrl' | 'events' | 'active' | 'description'>>;

export class WebhookRecords {
  private readonly webhooks: Collection<WebhookRecord>;

  constructor(
    store: Store,
    private readonly sealer: Sealer,
  ) {
    this.webhooks = store.collection<WebhookRecord>('webhooks');
  }

  async prepare(): Promise<void> {
    await this.webhooks.createIndex({ tenant: 1, slot: 1 }, { unique: true });
  }

  async create(record: Omit<WebhookRecord, 'slot' | 'secret'> & { secret: string }): Promise<WebhookRecord> {
    const { secret, ...rest } = record;
    const sealed = this.sealer.seal(secret, record._id);
    for (let attempt = 0; attempt < MAX_WEBHOOKS_PER_TENANT; attempt++) {
      const used = new Set((await this.webhooks.find({ tenant: record.tenant })).map((w) => w.slot));
      const slot = Array.from({ length: MAX_WEBHOOKS_PER_TENANT }, (_, i) => i).find((i) => !used.has(i));
      if (slot === undefined) {
        const message = `webhooks: at most ${MAX_WEBHOOKS_PER_TENANT} webhooks per API key`;
        throw createError('VALIDATION_ERROR', message, { errors: [message] });
      }
      const doc = { ...rest, slot, secret: sealed };
      try {
        await this.webhooks.insertOne(doc);
        return doc;
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err; // another creation took this slot; look again
      }
    }
    throw createError('UNAVAILABLE', 'webhook could not be created; retry');
  }

  /** A webhook of a tenant, for a delivery (the tenant is the delivery's own). */
  get(id: string, tenant: string): Promise<WebhookRecord | null> {
    return this.webhooks.findOne({ _id: id, tenant });
  }

  find(id: string, tenant: string): Promise<WebhookRecord | null> {
    return this.webhooks.findOne({ _id: id, tenant });
  }

  list(tenant: string): Promise<WebhookRecord[]> {
    return this.webhooks.find({ tenant }, { sort: { createdAt: 1 } });
  }

  /** Active webhooks of the tenant subscribed to `eventType` (SPEC 6.3 rule 4). */
  subscribers(tenant: string, eventType: string): Promise<WebhookRecord[]> {
    return this.webhooks.find({ tenant, active: true, events: eventType });
  }

  update(id: string, tenant: string, changes: WebhookChanges): Promise<WebhookRecord | null> {
    return this.webhooks.findOneAndUpdate({ _id: id, tenant }, { $set: changes });
  }

  async remove(id: string, tenant: string): Promise<boolean> {
    return (await this.webhooks.deleteOne({ _id: id, tenant })) === 1;
  }

  secretOf(webhook: WebhookRecord): string {
    return this.sealer.unseal(webhook.secret, webhook._id).toString('utf8');
  }
}

/** SPEC 2.7 without the secret (which is shown only once, at creation). */
export function toResource(webhook: WebhookRecord): Webhook {
  const resource: Webhook = {
    id: webhook._id,
    callbackUrl: webhook.callbackUrl,
    events: webhook.events as Webhook['events'],
    active: webhook.active,
    createdAt: webhook.createdAt.toISOString(),
  };
  if (webhook.description !== undefined) resource.description = webhook.description;
  return resource;
}
