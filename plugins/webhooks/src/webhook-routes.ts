/** The webhook routes of SPEC 4.15: each tenant sees only its own webhooks and logs. */
import { randomUUID } from 'node:crypto';
import { checkBody, createError, randomHex, type HostResolver, type Tenant } from '@opco-proxy/core';
import type { PluginRoutes } from '@opco-proxy/core';
import { assertCallbackTarget, CallbackUrlError, type Mode } from './ssrf.js';
import { toResource, type WebhookChanges, type WebhookRecords } from './webhook-records.js';
import { toDeliveryRecord, type Deliveries } from './deliveries.js';

export interface WebhookRouteDeps {
  records: WebhookRecords;
  deliveries: Deliveries;
  mode: Mode;
  resolveHost: HostResolver;
}

export function mountWebhookRoutes(router: PluginRoutes, deps: WebhookRouteDeps): void {
  const tenantOf = (ctx: { state: { tenant?: Tenant } }) => ctx.state.tenant!.hash;

  router.post('/webhooks', async (ctx) => {
    const body = checkBody<{ callbackUrl: string; events: string[]; description?: string }>('webhook-create-body', (ctx.request as { body?: unknown }).body);
    await checkTarget(body.callbackUrl, deps);
    const secret = randomHex(32);
    const webhook = await deps.records.create({
      _id: randomUUID(), tenant: tenantOf(ctx), callbackUrl: body.callbackUrl, events: [...new Set(body.events)],
      secret, active: true, description: body.description, createdAt: new Date(),
    });
    ctx.status = 201;
    ctx.body = { ...toResource(webhook), secret };
  });

  router.get('/webhooks', async (ctx) => {
    ctx.body = (await deps.records.list(tenantOf(ctx))).map(toResource);
  });

  router.patch('/webhooks/:id', async (ctx) => {
    const changes = checkBody<WebhookChanges>('webhook-update-body', (ctx.request as { body?: unknown }).body);
    if (!(await deps.records.find(ctx.params.id, tenantOf(ctx)))) throw notFound(ctx.params.id);
    if (changes.callbackUrl !== undefined) await checkTarget(changes.callbackUrl, deps);
    if (changes.events) changes.events = [...new Set(changes.events)];
    const updated = await deps.records.update(ctx.params.id, tenantOf(ctx), changes);
    if (!updated) throw notFound(ctx.params.id);
    const { id, callbackUrl, events, active, description } = toResource(updated);
    ctx.body = { id, callbackUrl, events, active, description };
  });

  router.delete('/webhooks/:id', async (ctx) => {
    if (!(await deps.records.remove(ctx.params.id, tenantOf(ctx)))) throw notFound(ctx.params.id);
    ctx.body = { deleted: true };
  });

  router.get('/webhooks/:id/logs', async (ctx) => {
    if (!(await deps.records.find(ctx.params.id, tenantOf(ctx)))) throw notFound(ctx.params.id);
    ctx.body = (await deps.deliveries.forWebhook(ctx.params.id, tenantOf(ctx))).map(toDeliveryRecord);
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
