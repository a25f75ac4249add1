/**
 * The webhooks plugin (SPEC 2.7, 2.8, 4.15, 5.6, 5.7, 6; D9, D22-D25): routes on the API side,
 * the outbox wherever events are emitted, signed delivery on the worker side.
 */
import { definePlugin, type PluginApi } from '@opco-proxy/core';
import { Deliveries } from './deliveries.js';
import { DeliveryWorker } from './delivery.js';
import { fanOut, requeueOverdue } from './outbox.js';
import { WebhookRecords } from './webhook-records.js';
import { mountWebhookRoutes } from './webhook-routes.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A due delivery still unclaimed after this long has lost its queue message. */
const REQUEUE_GRACE_MS = 30_000;

export async function registerWebhooks(api: PluginApi): Promise<void> {
  const { store, config, log } = api;
  const records = new WebhookRecords(store, config.masterKey);
  const deliveries = new Deliveries(store);
  await records.prepare();
  await deliveries.prepare();
  const worker = new DeliveryWorker({
    deliveries, records, queue: api.queue, log, prometheus: api.prometheus, mode: config.mode, resolveHost: api.resolveHost,
    timeoutMs: config.webhooks.timeoutMs, retryDelaysMs: config.webhooks.retryDelaysMs,
    concurrency: config.webhooks.concurrency, retentionMs: config.webhooks.retentionDays * DAY_MS,
  });
  const outbox = { deliveries, records, worker, log, firstDelayMs: config.webhooks.retryDelaysMs[0] ?? 0 };

  api.hooks.add('event', async (event) => {
    await fanOut(outbox, event);
  });
  if (api.role !== 'worker') mountWebhookRoutes(api.router, { records, deliveries, mode: config.mode, resolveHost: api.resolveHost });
  if (api.role === 'api') return;

  let timer: NodeJS.Timeout | undefined;
  api.hooks.add('ready', async () => {
    // The embedded queue forgets everything on restart: queue every unfinished delivery again.
    if (api.queue.kind === 'embedded') await requeueOverdue(outbox, -365 * DAY_MS);
    await worker.start();
    timer = setInterval(() => {
      void requeueOverdue(outbox, REQUEUE_GRACE_MS)
        .then(() => deliveries.deliveries.sweepExpired())
        .catch((err) => log.warn({ err }, 'webhook outbox sweep failed'));
    }, REQUEUE_GRACE_MS);
    timer.unref();
  });
  api.hooks.add('close', async () => {
    clearInterval(timer);
    await worker.stop();
  });
}

export default definePlugin({ name: 'webhooks', register: registerWebhooks });
export { deliveryId } from './deliveries.js';
