/**
 * Signed delivery (SPEC 6.2, 6.3, D23, D24) on the worker side: one attempt per queue message,
 * under a lease, to the address the SSRF guard checked (its lookup is every new connection's), no
 * redirects followed, 10 s per attempt, at most 4 attempts at 0, 1 s, 5 s, 15 s. Each attempt
 * is recorded on the delivery. Many deliveries run at once, at most `perDestination` to one
 * origin (`destinations.ts`), so a slow receiver holds its own lane, not the line. The webhook
 * comes from the worker's copies when the delivery says they are current (`known-webhooks.ts`):
 * a delivery's store commands are its claim and its release.
 */
import type { LookupFunction } from 'node:net';
import { LeaseLost, settlesBy, type Claimed, type Clock, type Consumer, type HostResolver, type Logger, type PluginApi, type Queue, type RetryPolicy } from '@opco-proxy/core';
import { checkCallbackUrl, guardedLookup, type Mode } from './ssrf.js';
import { Destinations, originOf } from './destinations.js';
import { postNotification } from './notification-post.js';
import { notificationHeaders, type SigningKeys } from './signature.js';
import type { Deliveries, DeliveryRecord } from './deliveries.js';
import { keysAt, type WebhookRecord, type WebhookRecords } from './webhook-records.js';
import type { KnownWebhooks } from './known-webhooks.js';

export const DELIVERY_QUEUE = 'webhook-deliveries';
const DELIVERY_PRIORITY = 5;

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
  timeoutMs: number;
  /** SPEC 6.3: 4 attempts, after 1 s, 5 s, 15 s. */
  retries: RetryPolicy;
  concurrency: number;
  /** Attempts at once to one origin; by default half of `concurrency`. */
  perDestination?: number;
  retentionMs: number;
  emit: PluginApi['emit'];
}

interface DeliveryMessage {
  deliveryId: string;
  /** The destination's origin when the message was queued (absent on older messages and requeues). */
  origin?: string;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

export class DeliveryWorker {
  private consumer?: Consumer;
  private readonly destinations: Destinations;
  private readonly lookup: LookupFunction;
  private stopping = false;

  constructor(private readonly deps: DeliveryDeps) {
    this.destinations = new Destinations(deps.perDestination ?? Math.max(1, Math.ceil(deps.concurrency / 2)));
    this.lookup = guardedLookup(deps.mode, deps.resolveHost);
  }

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<DeliveryMessage>(DELIVERY_QUEUE, (m) => this.receive(m.body, m.redelivered), {
      prefetch: this.deps.concurrency,
    });
  }

  /** Stops taking deliveries; an attempt still running at `deadline` is abandoned, its lease lapses. */
  async stop(deadline: number): Promise<void> {
    const { clock } = this.deps;
    this.stopping = true;
    await settlesBy(clock, deadline, this.consumer?.cancel());
    this.destinations.close();
  }

  /** `callbackUrl`, when known, lets the worker put the delivery in its destination's lane before reading it. */
  async schedule(deliveryId: string, delayMs: number, callbackUrl?: string): Promise<void> {
    const origin = callbackUrl === undefined ? null : originOf(callbackUrl);
    const message: DeliveryMessage = origin ? { deliveryId, origin } : { deliveryId };
    await this.deps.queue.publish(DELIVERY_QUEUE, message, { priority: DELIVERY_PRIORITY, delayMs: Math.max(0, delayMs) });
  }

  /**
   * A message whose destination's lane is full is acknowledged and its delivery waits in the lane
   * (by id): the queue slot goes to another destination. A message without an origin is read first.
   */
  async receive(message: DeliveryMessage, redelivered: boolean): Promise<void> {
    const origin = message.origin ?? null;
    if (origin !== null && !this.destinations.tryEnter(origin)) {
      this.destinations.wait(origin, message.deliveryId);
      return;
    }
    await this.run(message.deliveryId, redelivered, origin);
  }

  private async run(deliveryId: string, redelivered: boolean, entered: string | null): Promise<void> {
    let lane = entered;
    try {
      await this.handle(deliveryId, redelivered, (origin) => {
        if (lane !== null) return;
        lane = origin;
        this.destinations.enter(origin);
      });
    } finally {
      if (lane !== null) this.next(lane);
    }
  }

  /** Starts the lane's next waiting delivery; a failure leaves its record due for the overdue sweep. */
  private next(origin: string): void {
    // Once stopping, what waits stays in the store, due, for the next start's overdue sweep.
    const deliveryId = this.destinations.leave(origin, !this.stopping);
    if (deliveryId === undefined) return;
    this.run(deliveryId, false, origin).catch((err) => this.deps.log.warn({ err, deliveryId }, 'webhook delivery left for the overdue sweep'));
  }

  async handle(deliveryId: string, redelivered: boolean, entering: (origin: string) => void = () => {}): Promise<void> {
    const { deliveries, timeoutMs } = this.deps;
    const claimed = await deliveries.claim(deliveryId, timeoutMs * 2);
    if (!claimed) return this.unclaimed(deliveryId, redelivered);
    const delivery = claimed.record;
    const known = await this.deps.known.of(delivery);
    const origin = known ? originOf(known.webhook.callbackUrl) : null;
    if (origin !== null) entering(origin);
    try {
      if (!known || !known.webhook.active) {
        await deliveries.leases.release(deliveryId, claimed.token, { status: 'failed', error: known ? 'webhook deactivated' : 'webhook deleted', expiresAt: this.expiry() });
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
  private unclaimed(deliveryId: string, redelivered: boolean): Promise<void> {
    return this.deps.deliveries.leases.unclaimed(deliveryId, redelivered, {
      finished: (delivery) => delivery.status === 'delivered' || delivery.status === 'failed',
      requeue: (delayMs) => this.schedule(deliveryId, delayMs),
    });
  }

  private async attempt(delivery: DeliveryRecord, callbackUrl: string, keys: SigningKeys): Promise<AttemptOutcome> {
    const rawBody = delivery.body;
    try {
      const url = checkCallbackUrl(callbackUrl, this.deps.mode);
      // A reused connection goes to the address checked when it was opened; every new one is
      // looked up (and checked) again by the guarded lookup.
      const headers = notificationHeaders(keys, rawBody, delivery.event, delivery._id, this.deps.clock.date());
      const statusCode = await postNotification(url, rawBody, headers, { agents: this.destinations.agents(url.origin), lookup: this.lookup, timeoutMs: this.deps.timeoutMs });
      const ok = statusCode >= 200 && statusCode < 300;
      return { ok, statusCode, error: ok ? null : `receiver answered ${statusCode}` };
    } catch (err) {
      const reason = (err as Error).message;
      return { ok: false, statusCode: null, error: (err as { code?: string }).code === 'ESSRF' ? `refused target: ${reason}` : reason };
    }
  }

  private async record({ record: delivery, token }: Claimed<DeliveryRecord>, outcome: AttemptOutcome, webhook: WebhookRecord): Promise<void> {
    const attempts = delivery.attempts + 1;
    const { retries, deliveries, log, clock } = this.deps;
    const base = { attempts, statusCode: outcome.statusCode, error: outcome.error };
    if (outcome.ok) {
      await deliveries.leases.release(delivery._id, token, { ...base, status: 'delivered', deliveredAt: clock.date(), expiresAt: this.expiry() });
      this.deps.attempts.inc({ outcome: 'delivered' });
      await this.deps.records.noteDelivered(webhook);
      return;
    }
    const delayMs = retries.nextDelay(attempts);
    this.deps.attempts.inc({ outcome: delayMs === null ? 'failed' : 'retrying' });
    if (delayMs === null) {
      await deliveries.leases.release(delivery._id, token, { ...base, status: 'failed', expiresAt: this.expiry() });
      log.warn({ deliveryId: delivery._id, webhookId: delivery.webhookId, attempts, error: outcome.error }, 'webhook delivery failed');
      const disabled = await this.deps.records.noteFailed(webhook, clock.date());
      if (disabled) await this.announceDisabled(disabled);
      return;
    }
    await deliveries.leases.release(delivery._id, token, { ...base, status: 'retrying', nextAttemptAt: new Date(clock.now() + delayMs) });
    await this.schedule(delivery._id, delayMs, webhook.callbackUrl);
  }

  /** P10: the tenant's other webhooks subscribed to webhook.disabled hear of it. */
  private async announceDisabled(webhook: WebhookRecord): Promise<void> {
    this.deps.log.warn({ webhookId: webhook._id, reason: webhook.disabledReason }, 'webhook switched off after 5 days of failed deliveries');
    await this.deps.emit({
      id: `${webhook._id}:disabled:${webhook.disabledAt!.getTime()}`,
      type: 'webhook.disabled',
      tenant: webhook.tenant,
      opcoId: '',
      data: { webhookId: webhook._id, callbackUrl: webhook.callbackUrl, disabledAt: webhook.disabledAt!.toISOString(), reason: webhook.disabledReason },
    });
  }

  private expiry(): Date {
    return new Date(this.deps.clock.now() + this.deps.retentionMs);
  }
}
