/**
 * Webhooks (SPEC 2.7, 4.15, D9) in the Store. The secret is sealed under the master key: the
 * service needs it back to sign, but a store dump must not hand it out. A tenant's webhooks
 * occupy numbered slots under a unique (tenant, slot) index, so even concurrent creations on
 * several instances can never give a tenant more than 20. Every change increments the record's
 * `revision` and then tells `onChange`, which brings the webhook's unfinished deliveries up to it:
 * that is what lets the delivery worker sign and send from its copy (known-webhooks.ts).
 */
import {
  DuplicateKeyError,
  createError,
  type Collection,
  type HeldRecords,
  type Sealed,
  type Sealer,
  type Store,
} from '@opco-proxy/core';
import { newestFirst, type Page, type PageRequest } from '@opco-proxy/core/durable';
import type { Webhook } from '@opco-proxy/schemas';
import type { SigningKeys } from './signature.js';

export const MAX_WEBHOOKS_PER_TENANT = 20;

export interface WebhookRecord {
  _id: string;
  tenant: string;
  slot: number;
  callbackUrl: string;
  events: string[];
  secret: Sealed;
  /** The secret before the last rotation, still signing until `previousSecretExpiresAt` (P10). */
  previousSecret?: Sealed | null;
  previousSecretExpiresAt?: Date | null;
  active: boolean;
  description?: string;
  createdAt: Date;
  /** Since when every delivery has failed (reset by a delivered one): 5 days of it disables the webhook. */
  failingSince?: Date | null;
  disabledAt?: Date | null;
  disabledReason?: string | null;
  /** Incremented by every change (absent on records older than it: 0). */
  revision?: number;
  /** The client address of a tenant the upstream had not accepted yet at creation (core's HeldWork, P13). */
  heldFrom?: string;
}

/** The revision deliveries of a deleted webhook are raised to: above any the record could have had. */
export const DELETED_REVISION = Number.MAX_SAFE_INTEGER;

/** A webhook's secrets, unsealed once for many deliveries. */
export interface UnsealedSecrets {
  current: string;
  /** The secret before the last rotation, signing beside the current one until `until` (P10). */
  previous?: { secret: string; until: Date };
}

export type WebhookChanges = Partial<Pick<WebhookRecord, 'callbackUrl' | 'events' | 'active' | 'description'>>;

/** P10: how long a rotated secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/** P10: a webhook whose deliveries have all failed for this long is switched off. */
export const FAILING_DISABLES_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

export class WebhookRecords {
  private readonly webhooks: Collection<WebhookRecord>;

  /** Told after each change, before the change is answered: the record's new revision, or DELETED_REVISION. */
  private onChange: (webhookId: string, revision: number) => Promise<void> = async () => {};

  constructor(
    store: Store,
    private readonly sealer: Sealer,
  ) {
    this.webhooks = store.collection<WebhookRecord>('webhooks');
  }

  /** Who follows the changes (the plugin: its memory of webhooks and the deliveries in flight). */
  followChanges(listener: (webhookId: string, revision: number) => Promise<void>): void {
    this.onChange = listener;
  }

  async prepare(): Promise<void> {
    await this.webhooks.createIndex({ tenant: 1, slot: 1 }, { unique: true });
    await this.webhooks.createIndex({ heldFrom: 1 });
  }

  /**
   * The webhooks unproven tenants registered, per client address (P13), for core's HeldWork. A
   * key the upstream refuses before ever accepting it loses them: nothing but its failed jobs'
   * events could ever be sent to them, and they would go on holding the address's bound.
   */
  held(): HeldRecords {
    return {
      kind: 'webhooks',
      countFrom: (address) => this.webhooks.count({ heldFrom: address }),
      tenantsFrom: async (address, limit) => [
        ...new Set((await this.webhooks.find({ heldFrom: address }, { limit })).map((w) => w.tenant)),
      ],
      unmark: (tenant) =>
        this.webhooks.updateMany({ tenant, heldFrom: { $exists: true } }, { $unset: { heldFrom: '' } }),
      dropRefused: async (tenant) => {
        for (const webhook of await this.webhooks.find({ tenant, heldFrom: { $exists: true } }))
          await this.remove(webhook._id, tenant);
      },
    };
  }

  async create(record: Omit<WebhookRecord, 'slot' | 'secret'> & { secret: string }): Promise<WebhookRecord> {
    const { secret, ...rest } = record;
    const sealed = this.sealer.seal(secret, record._id);
    // Each race lost is a free slot another creation took: past as many races as there are slots,
    // the next reading finds none and answers D9's 400. Only deletions freeing slots meanwhile
    // could keep the loop going, hence its bound.
    for (let attempt = 0; attempt <= MAX_WEBHOOKS_PER_TENANT; attempt++) {
      const used = new Set((await this.webhooks.find({ tenant: record.tenant })).map((w) => w.slot));
      const slot = Array.from({ length: MAX_WEBHOOKS_PER_TENANT }, (_, i) => i).find((i) => !used.has(i));
      if (slot === undefined) {
        const message = `webhooks: at most ${MAX_WEBHOOKS_PER_TENANT} webhooks per API key`;
        throw createError('VALIDATION_ERROR', message, { errors: [message] });
      }
      const doc = { ...rest, slot, secret: sealed, revision: 0 };
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

  /** Every tenant's webhooks, newest first, for operators (P9): the disabled ones, the failing ones, or all. */
  pageAll(state: 'disabled' | 'failing' | 'all', page: PageRequest): Promise<Page<WebhookRecord>> {
    // A range on a date matches neither null nor a missing field, in every Store.
    const filter =
      state === 'disabled'
        ? { disabledAt: { $gt: new Date(0) } }
        : state === 'failing'
          ? { failingSince: { $gt: new Date(0) } }
          : {};
    return newestFirst(this.webhooks, filter, 'createdAt', page);
  }

  /** Active webhooks of the tenant subscribed to `eventType` (SPEC 6.3 rule 4). */
  subscribers(tenant: string, eventType: string): Promise<WebhookRecord[]> {
    return this.webhooks.find({ tenant, active: true, events: eventType });
  }

  /** The revision of each of these webhooks of a tenant that still exists. */
  async revisions(ids: string[], tenant: string): Promise<Map<string, number>> {
    const found = await this.webhooks.find({ _id: { $in: ids }, tenant });
    return new Map(found.map((w) => [w._id, w.revision ?? 0]));
  }

  /** Turning a webhook on again also forgets why it was switched off. */
  update(id: string, tenant: string, changes: WebhookChanges): Promise<WebhookRecord | null> {
    const revived = changes.active === true ? { failingSince: null, disabledAt: null, disabledReason: null } : {};
    return this.change({ _id: id, tenant }, { ...changes, ...revived });
  }

  /** A new secret; the one it replaces keeps signing for PREVIOUS_SECRET_MS. */
  async rotate(id: string, tenant: string, secret: string, now: Date): Promise<WebhookRecord | null> {
    const webhook = await this.find(id, tenant);
    if (!webhook) return null;
    return this.change(
      { _id: id, tenant },
      {
        secret: this.sealer.seal(secret, id),
        previousSecret: webhook.secret,
        previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_MS),
      },
    );
  }

  /** The secrets of a webhook, unsealed (the previous one whatever its age: see `keysAt`). */
  unsealedSecrets(webhook: WebhookRecord): UnsealedSecrets {
    const current = this.secretOf(webhook);
    if (!webhook.previousSecret || !webhook.previousSecretExpiresAt) return { current };
    return {
      current,
      previous: {
        secret: this.sealer.unseal(webhook.previousSecret, webhook._id).toString('utf8'),
        until: webhook.previousSecretExpiresAt,
      },
    };
  }

  /** A delivery succeeded: the failing streak, if any, is over. */
  async noteDelivered(webhook: WebhookRecord): Promise<void> {
    if (webhook.failingSince)
      await this.change({ _id: webhook._id, failingSince: { $ne: null } }, { failingSince: null });
  }

  /**
   * A delivery failed for good: starts the failing streak, or, once it has lasted
   * FAILING_DISABLES_AFTER_MS, switches the webhook off and returns it (to tell its tenant).
   */
  async noteFailed(webhook: WebhookRecord, now: Date): Promise<WebhookRecord | null> {
    if (!webhook.failingSince) {
      await this.change({ _id: webhook._id, failingSince: null }, { failingSince: now });
      return null;
    }
    if (now.getTime() - webhook.failingSince.getTime() < FAILING_DISABLES_AFTER_MS) return null;
    return this.change(
      { _id: webhook._id, active: true },
      {
        active: false,
        disabledAt: now,
        disabledReason: `every delivery failed since ${webhook.failingSince.toISOString()}`,
      },
    );
  }

  async remove(id: string, tenant: string): Promise<boolean> {
    if ((await this.webhooks.deleteOne({ _id: id, tenant })) !== 1) return false;
    await this.onChange(id, DELETED_REVISION);
    return true;
  }

  /** Every change of a record: the fields, a new revision, then `onChange` (see the file's comment). */
  private async change(filter: Record<string, unknown>, set: Partial<WebhookRecord>): Promise<WebhookRecord | null> {
    const changed = await this.webhooks.findOneAndUpdate(filter, { $set: set, $inc: { revision: 1 } });
    if (changed) await this.onChange(changed._id, changed.revision ?? 0);
    return changed;
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
  if (webhook.disabledAt) {
    resource.disabledAt = webhook.disabledAt.toISOString();
    if (webhook.disabledReason) resource.disabledReason = webhook.disabledReason;
  }
  return resource;
}

/** The secrets that sign a notification sent at `now`: the previous one only until it ends. */
export function keysAt(secrets: UnsealedSecrets, now: Date): SigningKeys {
  const { current, previous } = secrets;
  return previous && previous.until > now ? { current, previous: previous.secret } : { current };
}
