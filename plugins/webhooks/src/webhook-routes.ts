/** The webhook operations of SPEC 4.15: each tenant sees only its own webhooks and logs. */
import { randomUUID } from 'node:crypto';
import { createError, randomHex, type Clock, type HostResolver, type PluginApi } from '@opco-proxy/core';
import { assertCallbackTarget, CallbackUrlError, type Mode } from './ssrf.js';
import { toResource, type WebhookChanges, type WebhookRecords } from './webhook-records.js';
import { toDeliveryRecord, type Deliveries } from './deliveries.js';

export interface WebhookRouteDeps {
  records: WebhookRecords;
  deliveries: Deliveries;
  mode: Mode;
  resolveHost: HostResolver;
  clock: Clock;
}

export function mountWebhookRoutes(api: PluginApi<unknown>, deps: WebhookRouteDeps): void {
  api.route('createWebhook', async ({ body, tenant }) => {
    await checkTarget(body.callbackUrl, deps);
    const secret = randomHex(32);
    const webhook = await deps.records.create({
      _id: randomUUID(), tenant: tenant.hash, callbackUrl: body.callbackUrl, events: [...new Set(body.events)],
      secret, active: true, description: body.description, createdAt: deps.clock.date(),
    });
    return { status: 201, body: { ...toResource(webhook), secret } };
  });

  api.route('listWebhooks', async ({ tenant }) => ({ status: 200, body: (await deps.records.list(tenant.hash)).map(toResource) }));

  api.route('updateWebhook', async ({ params, body, tenant }) => {
    const changes: WebhookChanges = { ...body };
    if (!(await deps.records.find(params.id!, tenant.hash))) throw notFound(params.id!);
    if (changes.callbackUrl !== undefined) await checkTarget(changes.callbackUrl, deps);
    if (changes.events) changes.events = [...new Set(changes.events)];
    const updated = await deps.records.update(params.id!, tenant.hash, changes);
    if (!updated) throw notFound(params.id!);
    const { id, callbackUrl, events, active, description } = toResource(updated);
    return { status: 200, body: { id, callbackUrl, events, active, description } };
  });

  api.route('deleteWebhook', async ({ params, tenant }) => {
    if (!(await deps.records.remove(params.id!, tenant.hash))) throw notFound(params.id!);
    return { status: 200, body: { deleted: true } };
  });

  api.route('listWebhookDeliveries', async ({ params, tenant }) => {
    if (!(await deps.records.find(params.id!, tenant.hash))) throw notFound(params.id!);
    return { status: 200, body: (await deps.deliveries.forWebhook(params.id!, tenant.hash)).map(toDeliveryRecord) };
  });
}

async function checkTarget(url: string, deps: WebhookRouteDeps): Promise<void> {
  try {
    await assertCallbackTarget(url, deps.mode, deps.resolveHost);
  } catch (err) {
    if (err instanceof CallbackUrlError) throw createError('VALIDATION_ERROR', err.message, { errors: [err.message] });
    throw err;
  }
}

function notFound(id: string) {
  return createError('NOT_FOUND', `webhook ${id} not found`);
}
