/** The service's own routes: /health (SPEC 4.1), /ready (store reachable), /doc (4.2), /metrics. */
import type Router from '@koa/router';
import { buildOpenApi } from '@opco-proxy/schemas';
import { createError } from './errors.js';
import type { Store } from './ports/store.js';
import type { Queue } from './ports/queue.js';
import type { PrometheusMetrics } from './metrics.js';

export function mountSystemRoutes(router: Router, deps: { store: Store; queue: Queue; prometheus: PrometheusMetrics; readyTimeoutMs?: number }): void {
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/ready', async (ctx) => {
    try {
      await withTimeout(deps.store.ping(), deps.readyTimeoutMs ?? 3000);
    } catch (err) {
      throw createError('UNAVAILABLE', `store (${deps.store.kind}) unreachable`, { cause: err });
    }
    try {
      await withTimeout(deps.queue.ping(), deps.readyTimeoutMs ?? 3000);
    } catch (err) {
      throw createError('UNAVAILABLE', `queue (${deps.queue.kind}) unreachable`, { cause: err });
    }
    ctx.body = { status: 'ready', store: deps.store.kind, queue: deps.queue.kind };
  });
  router.get('/doc', (ctx) => {
    ctx.body = buildOpenApi();
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = deps.prometheus.registry.contentType;
    ctx.body = await deps.prometheus.registry.metrics();
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
