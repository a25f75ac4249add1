/**
 * The hub admin API (D26), under /admin, behind `Authorization: Bearer <OPCO_PROXY_HUB_ADMIN_KEY>`:
 * key management, connected instances, budgets, configuration reload. Answers and errors have
 * the service's shapes (SPEC 7).
 */
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { createError, safeEqualHex, sha256Hex, type Clock, type Logger } from '@opco-proxy/core';
import { type AddressLimits } from '@opco-proxy/core/limits';
import { type TrustedProxies } from '@opco-proxy/core/application';
import { validateRequest, type HubKeyBody } from '@opco-proxy/schemas';
import type { GrantScheduler } from './grant-scheduler.js';
import type { HubKeys } from './hub-keys.js';
import type { LeadershipView } from './hub-leadership.js';
import type { InstanceView } from './instance-session.js';

export interface AdminDeps {
  keys: HubKeys;
  log: Logger;
  /** Undefined while this hub stands by (failover). */
  scheduler(): GrantScheduler | undefined;
  /** Which hub leads: GET /admin/limits says it (and /health). */
  leadership(): LeadershipView;
  clock: Clock;
  adminKey: string;
  instances(): InstanceView[];
  /** Closes the connections made with a key; returns how many. */
  closeKey(keyId: string): number;
  /** Re-reads the config file and applies its limits; returns them. */
  reload(): Promise<Record<string, unknown>>;
}

const BODY_LIMIT_BYTES = 64 * 1024;

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
    const body = await readJson(ctx);
    const { fleetId, name } = checkKeyBody(body);
    if ((body as HubKeyBody).tenantId !== undefined)
      deps.log.warn({ fleetId }, 'POST /admin/keys: tenantId is deprecated, send fleetId');
    ctx.status = 201;
    ctx.body = await deps.keys.create(fleetId, name, deps.clock.date());
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
    const { role, leader } = deps.leadership();
    ctx.body = { role, leader, limits: deps.scheduler()?.limits() ?? [] };
  });

  router.post('/reload', async (ctx) => {
    ctx.body = { status: 'reloaded', opcos: await deps.reload() };
  });

  return router;
}

/** A key's fleet and name (hub-key-body.schema.json); `tenantId` is the previous version's name of `fleetId`. */
function checkKeyBody(body: unknown): { fleetId: string; name: string } {
  const result = validateRequest('hub-key-body', body);
  if (!result.valid) throw createError('VALIDATION_ERROR', 'invalid request body', { errors: result.errors });
  const fields = body as HubKeyBody;
  return { fleetId: (fields.fleetId ?? fields.tenantId)!, name: fields.name };
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
