/** The webhook operations of SPEC 4.15: each tenant sees only its own webhooks and logs. */
import { randomUUID } from 'node:crypto';
import {
  createError,
  isServiceError,
  randomHex,
  type Clock,
  type HostResolver,
  type PluginApi,
} from '@opco-proxy/core';
import { RequestRate } from '@opco-proxy/core/limits';
import { assertCallbackTarget, CallbackUrlError, type Mode } from './ssrf.js';
import { toResource, type WebhookChanges, type WebhookRecords } from './webhook-records.js';
import { toDeliveryRecord, type Deliveries, type DeliveryRecord, type LogQuery } from './deliveries.js';
import type { DeliveryQueued } from '@opco-proxy/schemas';
import { signingSecret } from './signature.js';
import type { Destination } from './delivery.js';

export interface WebhookRouteDeps {
  records: WebhookRecords;
  deliveries: Deliveries;
  mode: Mode;
  resolveHost: HostResolver;
  clock: Clock;
  /** Queues a delivery for an attempt after `delayMs`, to its webhook's destination. */
  schedule(deliveryId: string, delayMs: number, to: Destination): Promise<void>;
  /** Test notifications a tenant may ask for per minute (issue 38: each can hold a delivery slot for 10 s). */
  testsPerMinute?: number;
}

/** The default of `webhooks.testsPerMinute`. */
export const TESTS_PER_MINUTE = 10;

export function mountWebhookRoutes(api: PluginApi<unknown>, deps: WebhookRouteDeps): void {
  const tests = testRate(deps);
  api.route('createWebhook', async ({ body, tenant }) => {
    await checkTarget(body.callbackUrl, deps);
    const secret = randomHex(32);
    const webhook = await api.heldWork.admit(tenant, 'webhooks', 0, () =>
      deps.records.create({
        _id: randomUUID(),
        tenant: tenant.hash,
        callbackUrl: body.callbackUrl,
        events: [...new Set(body.events)],
        secret,
        active: true,
        description: body.description,
        createdAt: deps.clock.date(),
        ...(tenant.unprovenFrom !== undefined ? { heldFrom: tenant.unprovenFrom } : {}),
      }),
    );
    return { status: 201, body: { ...toResource(webhook), secret, signingSecret: signingSecret(secret) } };
  });

  api.route('listWebhooks', async ({ tenant }) => ({
    status: 200,
    body: (await deps.records.list(tenant.hash)).map(toResource),
  }));

  api.route('updateWebhook', async ({ params, body, tenant }) => {
    const changes: WebhookChanges = { ...body };
    if (!(await deps.records.find(params.id, tenant.hash))) throw notFound(params.id);
    if (changes.callbackUrl !== undefined) await checkTarget(changes.callbackUrl, deps);
    if (changes.events) changes.events = [...new Set(changes.events)];
    const updated = await deps.records.update(params.id, tenant.hash, changes);
    if (!updated) throw notFound(params.id);
    const { id, callbackUrl, events, active, description } = toResource(updated);
    return { status: 200, body: { id, callbackUrl, events, active, description } };
  });

  api.route('deleteWebhook', async ({ params, tenant }) => {
    if (!(await deps.records.remove(params.id, tenant.hash))) throw notFound(params.id);
    return { status: 200, body: { deleted: true } };
  });

  api.route('listWebhookDeliveries', async ({ params, query, tenant }) => {
    if (!(await deps.records.find(params.id, tenant.hash))) throw notFound(params.id);
    const filters: LogQuery = {
      status: query.status,
      event: query.event,
      cursor: query.cursor,
      since: query.since ? new Date(query.since) : undefined,
      limit: query.limit ? Number(query.limit) : undefined,
    };
    const page = await deps.deliveries.page(params.id, tenant.hash, filters);
    const headers: Record<string, string> = {};
    if (page.next) headers.Link = `<${nextPage(params.id, query, page.next)}>; rel="next"`;
    return { status: 200, body: page.records.map(toDeliveryRecord), headers };
  });

  api.route('testWebhook', async ({ params, tenant }) => {
    const webhook = await deps.records.find(params.id, tenant.hash);
    if (!webhook) throw notFound(params.id);
    tests(tenant.hash);
    const event = {
      id: randomHex(16),
      type: 'webhook.test' as const,
      tenant: tenant.hash,
      opcoId: '',
      timestamp: deps.clock.date().toISOString(),
      data: { webhookId: webhook._id, message: 'a test notification, sent because it was asked for' },
    };
    const [delivery] = await deps.deliveries.record(event, [{ webhookId: webhook._id }], 0);
    await deps.schedule(delivery.id, 0, webhook);
    return { status: 202, body: { deliveryId: delivery.id, event: 'webhook.test', status: 'retrying' } };
  });

  api.route('resendWebhookDelivery', async ({ params, tenant }) => {
    const webhook = await deps.records.find(params.id, tenant.hash);
    if (!webhook) throw notFound(params.id);
    const delivery = await deps.deliveries.get(params.deliveryId);
    if (!delivery || delivery.webhookId !== params.id || delivery.tenant !== tenant.hash) {
      throw createError('NOT_FOUND', `delivery ${params.deliveryId} not found`);
    }
    return { status: 202, body: await sendAgain(deps, delivery, webhook) };
  });

  api.route('recoverWebhookDeliveries', async ({ params, body, tenant }) => {
    const webhook = await deps.records.find(params.id, tenant.hash);
    if (!webhook) throw notFound(params.id);
    let recovered = 0;
    for (const failed of await deps.deliveries.failedSince(params.id, tenant.hash, new Date(body.since))) {
      const resent = await deps.deliveries.resend(failed._id);
      if (!resent) continue;
      await deps.schedule(resent._id, 0, webhook);
      recovered += 1;
    }
    return { status: 202, body: { recovered } };
  });

  api.route('rotateWebhookSecret', async ({ params, tenant }) => {
    const secret = randomHex(32);
    const rotated = await deps.records.rotate(params.id, tenant.hash, secret, deps.clock.date());
    if (!rotated) throw notFound(params.id);
    return {
      status: 200,
      body: {
        id: rotated._id,
        secret,
        signingSecret: signingSecret(secret),
        previousSecretExpiresAt: rotated.previousSecretExpiresAt!.toISOString(),
      },
    };
  });
}

/** P10: a finished delivery on its way again, same id and body; 409 while it is still on its way. */
export async function sendAgain(
  deps: Pick<WebhookRouteDeps, 'deliveries' | 'schedule'>,
  delivery: DeliveryRecord,
  webhook: Destination,
): Promise<DeliveryQueued> {
  const resent = await deps.deliveries.resend(delivery._id);
  if (!resent) throw createError('CONFLICT', `delivery ${delivery._id} is already on its way (${delivery.status})`);
  await deps.schedule(resent._id, 0, webhook);
  return { deliveryId: resent._id, event: resent.event as DeliveryQueued['event'], status: 'retrying' };
}

/**
 * `POST /webhooks/{id}/test` per tenant (issue 38 point 4): a token bucket of `testsPerMinute`,
 * refilled evenly over the minute, kept by each instance; beyond, 429 RATE_LIMITED with
 * Retry-After. A test of a webhook the tenant does not have costs nothing (404 first).
 */
function testRate(deps: WebhookRouteDeps): (tenant: string) => void {
  const perMinute = deps.testsPerMinute ?? TESTS_PER_MINUTE;
  const rate = new RequestRate({ perSecond: perMinute / 60, burst: perMinute }, deps.clock);
  return (tenant) => {
    try {
      rate.take(tenant);
    } catch (err) {
      if (!isServiceError(err)) throw err;
      throw createError('RATE_LIMITED', `at most ${perMinute} test notifications a minute per API key`, {
        headers: err.headers,
      });
    }
  };
}

/** The address of the next page: the same filters, the new cursor. */
function nextPage(webhookId: string, query: object, cursor: string): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (typeof value === 'string' && name !== 'cursor') params.set(name, value);
  params.set('cursor', cursor);
  return `/webhooks/${encodeURIComponent(webhookId)}/logs?${params.toString()}`;
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
