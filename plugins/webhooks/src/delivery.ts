/**
 * Signed delivery (SPEC 6.2, 6.3, D23, D24) on the worker side: one attempt per queue message,
 * under a lease, to the address the SSRF guard checked (its lookup is every new connection's), no
 * redirects followed, 10 s per attempt (3 s to connect and 5 s to the answer's headers within
 * them), at most 4 attempts at 0, 1 s, 5 s, 15 s. Each attempt is recorded on the delivery.
 * Every message is acknowledged as it arrives and its delivery takes its turn for one of the
 * worker's slots (`turns.ts`): tenants take turns, a quarter of the slots are kept for tenants
 * with nothing in flight, and a tenant's attempts to one origin are bounded, so a slow receiver
 * holds its own tenant's lane, not the line. The webhook comes from the worker's copies when the
 * delivery says they are current (`known-webhooks.ts`): a delivery's store commands are its claim
 * and its release.
 */
import type { LookupFunction } from 'node:net';
import {
  settlesBy,
  type Clock,
  type Consumer,
  type HostResolver,
  type Logger,
  type PluginApi,
  type Queue,
} from '@opco-proxy/core';
import { LeaseHeld, LeaseLost, type Claimed, type RetryPolicy } from '@opco-proxy/core/durable';
import { checkCallbackUrl, guardedLookup, type Mode } from './ssrf.js';
import { Destinations, originOf } from './destinations.js';
import { postNotification } from './notification-post.js';
import { notificationHeaders, type SigningKeys } from './signature.js';
import type { Deliveries, DeliveryRecord } from './deliveries.js';
import { keysAt, type WebhookRecord, type WebhookRecords } from './webhook-records.js';
import type { KnownWebhooks } from './known-webhooks.js';
import { turnLimits, Turns, type Turn, type TurnLimits } from './turns.js';

export const DELIVERY_QUEUE = 'webhook-deliveries';
const DELIVERY_PRIORITY = 5;
/** A run that failed on the store or the queue is queued again after this long (else the overdue sweep). */
const AFTER_TROUBLE_MS = 1000;

export interface DeliveryDeps {
  deliveries: Deliveries;
  records: WebhookRecords;
  known: KnownWebhooks;
  queue: Queue;
  log: Logger;
  clock: Clock;
  attempts: { inc(labels: { outcome: string }): void };
  mode: Mode;
  resolveHost: HostResolver;
  /** SPEC 6.3: the whole attempt. */
  timeoutMs: number;
  /** To a connection, within `timeoutMs` (default: `timeoutMs`). */
  connectTimeoutMs?: number;
  /** To the answer's status line and headers, within `timeoutMs` (default: `timeoutMs`). */
  headersTimeoutMs?: number;
  /** SPEC 6.3: 4 attempts, after 1 s, 5 s, 15 s. */
  retries: RetryPolicy;
  /** The worker's slots: attempts at once. */
  concurrency: number;
  /** How the slots are shared (default `turnLimits(concurrency)`). */
  turns?: Partial<TurnLimits>;
  retentionMs: number;
  emit: PluginApi['emit'];
}

/** Where a delivery goes: its webhook's tenant and callback URL (a webhook record is one). */
export interface Destination {
  tenant: string;
  callbackUrl: string;
}

interface DeliveryMessage {
  deliveryId: string;
  /** The destination's origin when the message was queued (absent on older messages). */
  origin?: string;
  /** The webhook's tenant (absent on older messages). */
  tenant?: string;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

export class DeliveryWorker {
  private consumer?: Consumer;
  private readonly destinations: Destinations;
  private readonly turns: Turns;
  private readonly lookup: LookupFunction;
  private stopping = false;

  constructor(private readonly deps: DeliveryDeps) {
    this.destinations = new Destinations(deps.concurrency);
    this.turns = new Turns({ ...turnLimits(deps.concurrency), ...deps.turns, slots: deps.concurrency }, (turn) =>
      this.run(turn),
    );
    this.lookup = guardedLookup(deps.mode, deps.resolveHost);
  }

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<DeliveryMessage>(
      DELIVERY_QUEUE,
      (m) => this.receive(m.body, m.redelivered),
      {
        prefetch: this.deps.concurrency,
      },
    );
  }

  /** Stops taking deliveries; an attempt still running at `deadline` is abandoned, its lease lapses. */
  async stop(deadline: number): Promise<void> {
    const { clock } = this.deps;
    this.stopping = true;
    // What waits stays in the store, due, for the next start's overdue sweep.
    this.turns.stop();
    await settlesBy(clock, deadline, this.consumer?.cancel());
    this.destinations.close();
  }

  /** `to`, when known, lets the worker give the delivery its tenant's turn before reading it. */
  async schedule(deliveryId: string, delayMs: number, to?: Destination): Promise<void> {
    const origin = to === undefined ? null : originOf(to.callbackUrl);
    await this.publish({ deliveryId, ...(to && { tenant: to.tenant }), ...(origin !== null && { origin }) }, delayMs);
  }

  private async publish(message: DeliveryMessage, delayMs: number): Promise<void> {
    await this.deps.queue.publish(DELIVERY_QUEUE, message, {
      priority: DELIVERY_PRIORITY,
      delayMs: Math.max(0, delayMs),
    });
  }

  /**
   * A message is acknowledged at once and its delivery waits for its turn (by id): the queue's
   * slots never wait on a receiver. A message that does not say its tenant or origin (an older
   * one) waits with the others that do not.
   */
  async receive(message: DeliveryMessage, redelivered: boolean): Promise<void> {
    if (this.stopping) return;
    this.turns.offer({
      deliveryId: message.deliveryId,
      tenant: message.tenant ?? '',
      origin: message.origin ?? '',
      redelivered,
    });
  }

  /** Whether this worker has the delivery waiting for its turn or under way: the overdue sweep leaves it. */
  holds(deliveryId: string): boolean {
    return this.turns.holds(deliveryId);
  }

  /** Attempts running and deliveries waiting for a slot, in all or for one tenant (tests, metrics). */
  load(tenant?: string): { inFlight: number; waiting: number } {
    return { inFlight: this.turns.inFlight(tenant), waiting: this.turns.waiting(tenant) };
  }

  /**
   * One turn. Its message is acknowledged already: a failure of the store or the queue queues it
   * again shortly, failing that the record is left, due, for the overdue sweep.
   */
  private async run(turn: Turn): Promise<void> {
    try {
      await this.handle(turn);
    } catch (err) {
      // Held by a live lease: its holder may have died (D18); back when the lease may have lapsed.
      const delayMs = err instanceof LeaseHeld ? this.deps.timeoutMs * 2 : AFTER_TROUBLE_MS;
      try {
        if (this.stopping) throw err;
        await this.publish(messageOf(turn), delayMs);
      } catch {
        this.deps.log.warn({ err, deliveryId: turn.deliveryId }, 'webhook delivery left for the overdue sweep');
      }
    }
  }

  private async handle(turn: Turn): Promise<void> {
    const { deliveries, timeoutMs } = this.deps;
    const { deliveryId } = turn;
    const claimed = await deliveries.claim(deliveryId, timeoutMs * 2);
    if (!claimed) return this.unclaimed(turn);
    const delivery = claimed.record;
    const known = await this.deps.known.of(delivery);
    try {
      if (!known || !known.webhook.active) {
        await deliveries.leases.release(deliveryId, claimed.token, {
          status: 'failed',
          error: known ? 'webhook deactivated' : 'webhook deleted',
          expiresAt: this.expiry(),
        });
        return;
      }
      const { webhook, secrets } = known;
      const outcome = await this.attempt(delivery, webhook.callbackUrl, keysAt(secrets, this.deps.clock.date()));
      await this.record(claimed, outcome, webhook);
    } catch (err) {
      if (!(err instanceof LeaseLost)) throw err;
    }
  }

  /** Not claimable: finished, leased by a live attempt, or early (LeasedRecords.unclaimed). */
  private unclaimed(turn: Turn): Promise<void> {
    return this.deps.deliveries.leases.unclaimed(turn.deliveryId, turn.redelivered, {
      finished: (delivery) => delivery.status === 'delivered' || delivery.status === 'failed',
      requeue: (delayMs) => this.publish(messageOf(turn), delayMs),
    });
  }

  private async attempt(delivery: DeliveryRecord, callbackUrl: string, keys: SigningKeys): Promise<AttemptOutcome> {
    const rawBody = delivery.body;
    try {
      const url = checkCallbackUrl(callbackUrl, this.deps.mode);
      // A reused connection goes to the address checked when it was opened; every new one is
      // looked up (and checked) again by the guarded lookup.
      const headers = notificationHeaders(keys, rawBody, delivery.event, delivery._id, this.deps.clock.date());
      const { timeoutMs, connectTimeoutMs, headersTimeoutMs } = this.deps;
      let statusCode: number;
      try {
        statusCode = await postNotification(url, rawBody, headers, {
          agents: this.destinations.use(url.origin),
          clock: this.deps.clock,
          lookup: this.lookup,
          timeoutMs,
          connectTimeoutMs,
          headersTimeoutMs,
        });
      } finally {
        this.destinations.release(url.origin);
      }
      const ok = statusCode >= 200 && statusCode < 300;
      return { ok, statusCode, error: ok ? null : `receiver answered ${statusCode}` };
    } catch (err) {
      const reason = (err as Error).message;
      return {
        ok: false,
        statusCode: null,
        error: (err as { code?: string }).code === 'ESSRF' ? `refused target: ${reason}` : reason,
      };
    }
  }

  private async record(
    { record: delivery, token }: Claimed<DeliveryRecord>,
    outcome: AttemptOutcome,
    webhook: WebhookRecord,
  ): Promise<void> {
    const attempts = delivery.attempts + 1;
    const { retries, deliveries, log, clock } = this.deps;
    const base = { attempts, statusCode: outcome.statusCode, error: outcome.error };
    if (outcome.ok) {
      await deliveries.leases.release(delivery._id, token, {
        ...base,
        status: 'delivered',
        deliveredAt: clock.date(),
        expiresAt: this.expiry(),
      });
      this.deps.attempts.inc({ outcome: 'delivered' });
      await this.deps.records.noteDelivered(webhook);
      return;
    }
    const delayMs = retries.nextDelay(attempts);
    this.deps.attempts.inc({ outcome: delayMs === null ? 'failed' : 'retrying' });
    if (delayMs === null) {
      await deliveries.leases.release(delivery._id, token, { ...base, status: 'failed', expiresAt: this.expiry() });
      log.warn(
        { deliveryId: delivery._id, webhookId: delivery.webhookId, attempts, error: outcome.error },
        'webhook delivery failed',
      );
      const disabled = await this.deps.records.noteFailed(webhook, clock.date());
      if (disabled) await this.announceDisabled(disabled);
      return;
    }
    await deliveries.leases.release(delivery._id, token, {
      ...base,
      status: 'retrying',
      nextAttemptAt: new Date(clock.now() + delayMs),
    });
    await this.schedule(delivery._id, delayMs, webhook);
  }

  /** P10: the tenant's other webhooks subscribed to webhook.disabled hear of it. */
  private async announceDisabled(webhook: WebhookRecord): Promise<void> {
    this.deps.log.warn(
      { webhookId: webhook._id, reason: webhook.disabledReason },
      'webhook switched off after 5 days of failed deliveries',
    );
    await this.deps.emit({
      id: `${webhook._id}:disabled:${webhook.disabledAt!.getTime()}`,
      type: 'webhook.disabled',
      tenant: webhook.tenant,
      opcoId: '',
      data: {
        webhookId: webhook._id,
        callbackUrl: webhook.callbackUrl,
        disabledAt: webhook.disabledAt!.toISOString(),
        reason: webhook.disabledReason,
      },
    });
  }

  private expiry(): Date {
    return new Date(this.deps.clock.now() + this.deps.retentionMs);
  }
}

/** A turn's message again: its tenant and origin as the first message said them. */
function messageOf(turn: Turn): DeliveryMessage {
  return {
    deliveryId: turn.deliveryId,
    ...(turn.tenant !== '' && { tenant: turn.tenant }),
    ...(turn.origin !== '' && { origin: turn.origin }),
  };
}
