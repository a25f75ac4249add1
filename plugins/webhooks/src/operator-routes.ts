/**
 * The webhooks plugin's operator routes (P9): deliveries and webhooks across tenants, and a resend
 * on a tenant's behalf. Tenants appear as their hashes; secrets, notification bodies and whatever
 * a callback URL carries beyond its origin and path (credentials, tokens in the query) stay out.
 */
import { createError, type PluginApi } from '@opco-proxy/core';
import type { AdminDeliveryPage, AdminWebhookPage } from '@opco-proxy/schemas';
import type { DeliveryRecord } from './deliveries.js';
import type { WebhookRecord } from './webhook-records.js';
import { sendAgain, type WebhookRouteDeps } from './webhook-routes.js';

export function mountOperatorRoutes(api: PluginApi<unknown>, deps: WebhookRouteDeps): void {
  api.route('listAdminDeliveries', async ({ query }) => {
    const page = await deps.deliveries.pageAll({
      status: query.status ?? 'failed',
      limit: limitOf(query.limit),
      cursor: query.cursor,
    });
    const targets = await targetsOf(deps, page.records);
    return {
      status: 200,
      body: { items: page.records.map((d) => adminDelivery(d, targets.get(d.webhookId))), next: page.next ?? null },
    };
  });

  api.route('resendAdminDelivery', async ({ params }) => {
    const delivery = await deps.deliveries.get(params.deliveryId);
    if (!delivery) throw createError('NOT_FOUND', `delivery ${params.deliveryId} not found`);
    const webhook = await deps.records.get(delivery.webhookId, delivery.tenant);
    if (!webhook) throw createError('NOT_FOUND', `the webhook of delivery ${delivery._id} was deleted`);
    // Turning a webhook back on is its tenant's decision (PATCH /webhooks/{id} {active: true}).
    if (!webhook.active)
      throw createError('CONFLICT', `webhook ${webhook._id} is switched off; its tenant turns it on again`);
    // The audit record (D32) names the tenant the operator acted for, and its webhook.
    return {
      status: 202,
      body: await sendAgain(deps, delivery, webhook),
      audit: { tenant: delivery.tenant, targets: { webhookId: delivery.webhookId } },
    };
  });

  api.route('listAdminWebhooks', async ({ query }) => {
    const page = await deps.records.pageAll(query.state ?? 'disabled', {
      limit: limitOf(query.limit),
      cursor: query.cursor,
    });
    return { status: 200, body: { items: page.records.map(adminWebhook), next: page.next ?? null } };
  });
}

function limitOf(limit: string | undefined): number {
  return limit ? Number(limit) : 50;
}

/** The callback URL of each webhook the deliveries went to; a deleted webhook has none. */
async function targetsOf(deps: WebhookRouteDeps, deliveries: DeliveryRecord[]): Promise<Map<string, string>> {
  const targets = new Map<string, string>();
  for (const { webhookId, tenant } of deliveries) {
    if (targets.has(webhookId)) continue;
    const webhook = await deps.records.get(webhookId, tenant);
    targets.set(webhookId, webhook ? shownTarget(webhook.callbackUrl) : '(deleted webhook)');
  }
  return targets;
}

/** Origin and path only: credentials, query and fragment may hold the receiver's own secrets. */
export function shownTarget(callbackUrl: string): string {
  try {
    const url = new URL(callbackUrl);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(unreadable URL)';
  }
}

function adminDelivery(delivery: DeliveryRecord, target = '(deleted webhook)'): AdminDeliveryPage['items'][number] {
  return {
    id: delivery._id,
    webhookId: delivery.webhookId,
    tenant: delivery.tenant,
    target,
    event: delivery.event as AdminDeliveryPage['items'][number]['event'],
    status: delivery.status === 'pending' ? 'retrying' : delivery.status,
    statusCode: delivery.statusCode,
    attempts: delivery.attempts,
    error: delivery.error,
    createdAt: delivery.createdAt.toISOString(),
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  };
}

function adminWebhook(webhook: WebhookRecord): AdminWebhookPage['items'][number] {
  return {
    id: webhook._id,
    tenant: webhook.tenant,
    target: shownTarget(webhook.callbackUrl),
    events: webhook.events as AdminWebhookPage['items'][number]['events'],
    active: webhook.active,
    createdAt: webhook.createdAt.toISOString(),
    failingSince: webhook.failingSince?.toISOString() ?? null,
    disabledAt: webhook.disabledAt?.toISOString() ?? null,
    disabledReason: webhook.disabledReason ?? null,
  };
}
