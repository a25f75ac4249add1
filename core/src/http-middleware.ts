/**
 * The HTTP edge, in order: interface version (D27), the one error shape (SPEC 7), access log
 * with masked keys (SPEC 5.5), client authentication (SPEC 5.1, D8), the tenant's own rate
 * (D6) and the body limit (D7).
 */
import type Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { ServiceError, asServiceError, createError, toErrorBody } from './errors.js';
import { authenticate, maskApiKey } from './tenant.js';
import type { RequestRate } from './request-rate.js';
import type { Logger } from './logger.js';
import type { Tenant } from './call-context.js';

export const API_VERSION = '1';

/** Routes that need no X-API-KEY (SPEC 4.0.1) and are exempt from the tenant rate (D6). */
const OPEN_PATHS = new Set(['/health', '/doc', '/ready', '/metrics']);

export interface State {
  tenant?: Tenant;
}

export function apiVersion(): Koa.Middleware {
  return async (ctx, next) => {
    ctx.set('Svc-Api-Version', API_VERSION);
    await next();
  };
}

export function renderErrors(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw createError('NOT_FOUND', `no route ${ctx.method} ${ctx.path}`);
    } catch (err) {
      const error = asServiceError(fromKoaError(err));
      if (error.code === 'INTERNAL_ERROR') log.error({ err: error.cause ?? err, path: ctx.path }, 'unexpected error');
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
      ctx.body = toErrorBody(error);
    }
  };
}

/** Errors raised by koa's own parts (body parser, router) carry an HTTP status; map them onto the table. */
function fromKoaError(err: unknown): unknown {
  const status = (err as { status?: number }).status;
  if (err instanceof ServiceError || typeof status !== 'number') return err;
  if (status === 413) return createError('PAYLOAD_TOO_LARGE', 'request body is over the size limit');
  if (status === 415) return createError('VALIDATION_ERROR', 'body: must be JSON', { errors: ['body: must be JSON'] });
  if (status === 400) return createError('VALIDATION_ERROR', 'body: invalid JSON', { errors: ['body: invalid JSON'] });
  if (status === 404 || status === 405 || status === 501) return createError('NOT_FOUND', 'no such route');
  return err;
}

export function accessLog(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = Date.now();
    try {
      await next();
    } finally {
      const key = ctx.get('x-api-key');
      log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Date.now() - started, apiKey: key ? maskApiKey(key) : undefined },
        'request',
      );
    }
  };
}

export function requireTenant(rate: RequestRate, allowList: ReadonlySet<string>): Koa.Middleware<State> {
  return async (ctx, next) => {
    if (OPEN_PATHS.has(ctx.path)) return next();
    const tenant = authenticate(ctx.headers['x-api-key'], allowList);
    rate.take(tenant.hash);
    ctx.state.tenant = tenant;
    await next();
  };
}

export function parseBody(limitBytes: number): Koa.Middleware {
  return bodyParser({ enableTypes: ['json'], jsonLimit: limitBytes, encoding: 'utf-8' }) as unknown as Koa.Middleware;
}
