/**
 * The hub admin API (D26), under /admin, behind `Authorization: Bearer <OPCO_PROXY_HUB_ADMIN_KEY>`:
 * key management, connected instances, budgets, configuration reload. Answers and errors have
 * the service's shapes (SPEC 7).
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { createError, safeEqualHex, sha256Hex, type AddressLimits, type Clock, type TrustedProxies } from '@opco-proxy/core';
import type { GrantScheduler } from './grant-scheduler.js';
import type { HubKeys } from './hub-keys.js';
import type { InstanceView } from './instance-session.js';

export interface AdminDeps {
  keys: HubKeys;
  scheduler: GrantScheduler;
  clock: Clock;
  adminKey: string;
  instances(): InstanceView[];
  /** Closes the connections made with a key; returns how many. */
  closeKey(keyId: string): number;
  /** Re-reads the config file and applies its limits; returns them. */
  reload(): Promise<Record<string, unknown>>;
}

const BODY_LIMIT_BYTES = 64 * 1024;
const TENANT_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The bearer is compared in constant time: both sides are hashed first, so neither the length
 * nor a matching prefix of the admin key shows in the time taken.
 *
 * Guessing it is slowed down per client address (issue 27), as core does for its operator key:
 * a wrong or missing key takes a token of the address's bucket (429 once they are spent) and,
 * after `freeFailures` in a row, shuts the address out for a backoff that doubles each time. The
 * key is not even compared while its address backs off; from any other address it works at once.
 */
export function requireAdmin(adminKey: string, addresses: AddressLimits, proxies: TrustedProxies) {
  const expected = sha256Hex(adminKey);
  return async (ctx: Context, next: Next) => {
    const address = proxies.clientOf(ctx.req);
    addresses.checkBackoff(address);
    const header = ctx.get('authorization');
    const match = /^Bearer (.+)$/.exec(header);
    if (!match || !safeEqualHex(sha256Hex(match[1]), expected)) {
      addresses.checkBeforeAuth(address);
      addresses.operatorFailed(address);
      throw createError('HTTP_ERROR', 'Authorization: Bearer <admin key> is missing or wrong');
    }
    addresses.operatorSucceeded(address);
    await next();
  };
}

export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: '/admin' });

  router.post('/keys', async (ctx) => {
    const { tenantId, name } = checkKeyBody(await readJson(ctx));
    ctx.status = 201;
    ctx.body = await deps.keys.create(tenantId, name, deps.clock.date());
  });

  router.get('/keys', async (ctx) => {
    ctx.body = await deps.keys.list();
  });

  router.delete('/keys/:id', async (ctx) => {
    const id = ctx.params.id;
    if (!(await deps.keys.revoke(id, deps.clock.date()))) throw createError('NOT_FOUND', `no hub key with id ${id}`);
    ctx.body = { deleted: true, id, closedConnections: deps.closeKey(id) };
  });

  router.get('/instances', (ctx) => {
    ctx.body = deps.instances();
  });

  router.get('/limits', (ctx) => {
    ctx.body = deps.scheduler.limits();
  });

  router.post('/reload', async (ctx) => {
    ctx.body = { status: 'reloaded', opcos: await deps.reload() };
  });

  return router;
}

function checkKeyBody(body: unknown): { tenantId: string; name: string } {
  const errors: string[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw createError('VALIDATION_ERROR', 'invalid request body', { errors: ['body: must be a JSON object {tenantId, name}'] });
  }
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) if (key !== 'tenantId' && key !== 'name') errors.push(`${key}: is not allowed`);
  if (fields.tenantId === undefined) errors.push('tenantId: Required');
  else if (typeof fields.tenantId !== 'string' || !TENANT_ID.test(fields.tenantId)) errors.push('tenantId: must be 1-128 letters, digits or _.:-');
  if (fields.name === undefined) errors.push('name: Required');
  else if (typeof fields.name !== 'string' || fields.name.trim() === '' || fields.name.length > 200 || CONTROL.test(fields.name)) {
    errors.push('name: must be a string of 1-200 characters without control characters');
  }
  if (errors.length > 0) throw createError('VALIDATION_ERROR', 'invalid request body', { errors });
  return { tenantId: fields.tenantId as string, name: fields.name as string };
}

/** The request body as JSON, at most 64 KiB. */
async function readJson(ctx: Context): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw createError('PAYLOAD_TOO_LARGE', `request body over ${BODY_LIMIT_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw createError('VALIDATION_ERROR', 'invalid request body', { errors: ['body: is not valid JSON'] });
  }
}
