/**
 * The webhooks plugin (SPEC 2.7, 2.8, 4.15, 5.6, 5.7, 6; D9, D22-D25): operations on the API
 * side, the outbox wherever events are emitted, signed delivery on the worker side.
 */
import { definePlugin, randomHex, type PluginApi } from '@opco-proxy/core';
import { RetryPolicy } from '@opco-proxy/core/durable';
import { Deliveries } from './deliveries.js';
import { DeliveryWorker, type Destination } from './delivery.js';
import { fanOut, requeueOverdue } from './outbox.js';
import { WebhookRecords } from './webhook-records.js';
import { KnownWebhooks } from './known-webhooks.js';
import { mountWebhookRoutes } from './webhook-routes.js';
import { mountOperatorRoutes } from './operator-routes.js';
import { DELIVERY_QUEUE } from './delivery.js';
import type { WebhooksConfig } from './generated/config.js';

export type { WebhooksConfig };

const DAY_MS = 24 * 60 * 60 * 1000;
/** A due delivery still unclaimed after this long has lost its queue message. */
const REQUEUE_GRACE_MS = 30_000;

export async function registerWebhooks(api: PluginApi<WebhooksConfig>): Promise<void> {
  const { store, config, log, clock } = api;
  const deliveries = new Deliveries(store, clock, `webhooks-${randomHex(4)}`);
  const records = new WebhookRecords(store, api.sealer);
  const known = new KnownWebhooks(records, clock);
  records.followChanges((webhookId, revision) => {
    known.forget(webhookId);
    return deliveries.follow(webhookId, revision);
  });
  await records.prepare();
  api.heldWork.register(records.held());
  await deliveries.prepare();
  const [firstDelayMs = 0, ...laterDelaysMs] = config.retryDelaysMs;
  const attempts = api.metrics.counter({
    name: 'opco_proxy_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed)',
    labelNames: ['outcome'] as const,
  });
  api.metrics.ageGauge({
    name: 'opco_proxy_delivery_lag_seconds',
    help: 'How long the most overdue webhook delivery has been due and not sent, 0 when the outbox keeps up (read from the store at most once a second, less often when the read is slow)',
    since: () => deliveries.dueSince(),
  });
  const worker = new DeliveryWorker({
    deliveries,
    records,
    known,
    queue: api.queue,
    log,
    clock,
    attempts,
    mode: api.mode,
    resolveHost: api.resolveHost,
    timeoutMs: config.timeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    retries: new RetryPolicy(config.retryDelaysMs.length, laterDelaysMs),
    concurrency: config.concurrency,
    retentionMs: config.retentionDays * DAY_MS,
    emit: api.emit,
  });
  const outbox = { deliveries, records, worker, log, firstDelayMs };

  api.addHook('event', async (event) => {
    await fanOut(outbox, event);
  });
  api.declareQueue(DELIVERY_QUEUE);
  if (api.role !== 'worker') {
    const routeDeps = {
      records,
      deliveries,
      mode: api.mode,
      resolveHost: api.resolveHost,
      clock,
      testsPerMinute: config.testsPerMinute,
      schedule: (id: string, delayMs: number, to: Destination) => worker.schedule(id, delayMs, to),
    };
    mountWebhookRoutes(api, routeDeps);
    mountOperatorRoutes(api, routeDeps);
  }
  if (api.role === 'api') return;

  api.recover({
    name: 'webhook deliveries',
    intervalMs: config.sweepIntervalMs,
    graceMs: REQUEUE_GRACE_MS,
    leaseMs: 2 * config.timeoutMs,
    requeue: (dueBefore) => requeueOverdue(outbox, dueBefore),
  });
  api.every('expiry', config.sweepIntervalMs, () => deliveries.sweepExpired());
  api.addHook('ready', () => worker.start());
  api.addHook('close', ({ deadline }) => worker.stop(deadline));
}

export default definePlugin({ name: 'webhooks', register: registerWebhooks });
export { deliveryId } from './deliveries.js';
