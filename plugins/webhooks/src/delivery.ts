/**
 * Signed delivery (SPEC 6.2, 6.3, D23, D24) on the worker side: one attempt per queue message,
 * under a lease, to the address the SSRF guard checked (its lookup is the connection's), no
 * redirects followed, 10 s per attempt, at most 4 attempts at 0, 1 s, 5 s, 15 s. Each attempt
 * is recorded on the delivery. Many deliveries run at once, so a slow receiver holds one slot,
 * not the line.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import got from 'got';
import { LeaseLost, settlesBy, type Claimed, type Clock, type Consumer, type HostResolver, type Logger, type Queue, type RetryPolicy } from '@opco-proxy/core';
import { checkCallbackUrl, guardedLookup, type Mode } from './ssrf.js';
import { notificationHeaders } from './signature.js';
import type { Deliveries, DeliveryRecord } from './deliveries.js';
import type { WebhookRecords } from './webhook-records.js';

export const DELIVERY_QUEUE = 'webhook-deliveries';
const DELIVERY_PRIORITY = 5;

export interface DeliveryDeps {
  deliveries: Deliveries;
  records: WebhookRecords;
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
  retentionMs: number;
}

interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

export class DeliveryWorker {
  private consumer?: Consumer;
  /**
   * Agents of its own without keep-alive: a reused connection skips the lookup, so every
   * delivery opens a connection to an address the SSRF guard has just checked.
   */
  private readonly agent = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };

  constructor(private readonly deps: DeliveryDeps) {}

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<{ deliveryId: string }>(DELIVERY_QUEUE, (m) => this.handle(m.body.deliveryId, m.redelivered), {
      prefetch: this.deps.concurrency,
    });
  }

  /** Stops taking deliveries; an attempt still running at `deadline` is abandoned, its lease lapses. */
  async stop(deadline: number): Promise<void> {
    const { clock } = this.deps;
    await settlesBy(clock, deadline, this.consumer?.cancel());
  }

  async schedule(deliveryId: string, delayMs: number): Promise<void> {
    await this.deps.queue.publish(DELIVERY_QUEUE, { deliveryId }, { priority: DELIVERY_PRIORITY, delayMs: Math.max(0, delayMs) });
  }

  async handle(deliveryId: string, redelivered: boolean): Promise<void> {
    const { deliveries, records, timeoutMs } = this.deps;
    const claimed = await deliveries.claim(deliveryId, timeoutMs * 2);
    if (!claimed) return this.unclaimed(deliveryId, redelivered);
    const delivery = claimed.record;
    const webhook = await records.get(delivery.webhookId, delivery.tenant);
    try {
      if (!webhook || !webhook.active) {
        await deliveries.leases.release(deliveryId, claimed.token, { status: 'failed', error: webhook ? 'webhook deactivated' : 'webhook deleted', expiresAt: this.expiry() });
        return;
      }
      const outcome = await this.attempt(delivery, webhook.callbackUrl, records.secretOf(webhook));
      await this.record(claimed, outcome);
    } catch (err) {
      if (!(err instanceof LeaseLost)) throw err;
    }
  }

  /** Not claimable: finished, leased by a live attempt, or early (a duplicate message). */
  private async unclaimed(deliveryId: string, redelivered: boolean): Promise<void> {
    const { clock } = this.deps;
    const delivery = await this.deps.deliveries.get(deliveryId);
    if (!delivery || delivery.status === 'delivered' || delivery.status === 'failed') return;
    const leased = delivery.leaseUntil !== null && delivery.leaseUntil.getTime() > clock.now();
    if (leased) {
      if (redelivered) throw new Error(`delivery ${deliveryId} is held by another worker`);
      return;
    }
    await this.schedule(deliveryId, delivery.nextAttemptAt.getTime() - clock.now());
  }

  private async attempt(delivery: DeliveryRecord, callbackUrl: string, secret: string): Promise<AttemptOutcome> {
    const rawBody = delivery.body;
    try {
      const url = checkCallbackUrl(callbackUrl, this.deps.mode);
      const response = await got.post(url, {
        body: rawBody,
        headers: notificationHeaders(secret, rawBody, delivery.event, delivery._id, this.deps.clock.date()),
        dnsLookup: guardedLookup(this.deps.mode, this.deps.resolveHost),
        agent: this.agent,
        timeout: { request: this.deps.timeoutMs },
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        responseType: 'text',
      });
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, statusCode: response.statusCode, error: ok ? null : `receiver answered ${response.statusCode}` };
    } catch (err) {
      const name = (err as { name?: string }).name;
      const code = (err as { code?: string }).code;
      const reason = name === 'TimeoutError' ? `no answer within ${this.deps.timeoutMs} ms` : (err as Error).message;
      return { ok: false, statusCode: null, error: code === 'ESSRF' ? `refused target: ${reason}` : reason };
    }
  }

  private async record({ record: delivery, token }: Claimed<DeliveryRecord>, outcome: AttemptOutcome): Promise<void> {
    const attempts = delivery.attempts + 1;
    const { retries, deliveries, log, clock } = this.deps;
    const base = { attempts, statusCode: outcome.statusCode, error: outcome.error };
    if (outcome.ok) {
      await deliveries.leases.release(delivery._id, token, { ...base, status: 'delivered', deliveredAt: clock.date(), expiresAt: this.expiry() });
      this.deps.attempts.inc({ outcome: 'delivered' });
      return;
    }
    const delayMs = retries.nextDelay(attempts);
    this.deps.attempts.inc({ outcome: delayMs === null ? 'failed' : 'retrying' });
    if (delayMs === null) {
      await deliveries.leases.release(delivery._id, token, { ...base, status: 'failed', expiresAt: this.expiry() });
      log.warn({ deliveryId: delivery._id, webhookId: delivery.webhookId, attempts, error: outcome.error }, 'webhook delivery failed');
      return;
    }
    await deliveries.leases.release(delivery._id, token, { ...base, status: 'retrying', nextAttemptAt: new Date(clock.now() + delayMs) });
    await this.schedule(delivery._id, delayMs);
  }

  private expiry(): Date {
    return new Date(this.deps.clock.now() + this.deps.retentionMs);
  }
}
