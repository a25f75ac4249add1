/** Inbound request metrics for operators: count and duration by route template, method and status. */
import type Koa from 'koa';
import type { Clock } from '../clock.js';
import type { PrometheusMetrics } from '../observability/metrics.js';
import { matchedRouteTemplate, type State } from './state.js';

export function httpMetrics(prometheus: PrometheusMetrics, clock: Clock): Koa.Middleware<State> {
  return async (ctx, next) => {
    const started = clock.now();
    try {
      await next();
    } finally {
      // Unmatched paths share one label: a scanner must not grow the metric without bound.
      countRequest(prometheus, matchedRouteTemplate(ctx) ?? 'unmatched', ctx.method, ctx.status, clock.now() - started);
    }
  };
}

/** Counts one answered request, from the middleware chain or the early path. */
export function countRequest(
  prometheus: PrometheusMetrics,
  route: string,
  method: string,
  status: number,
  ms: number,
): void {
  prometheus.httpRequests.inc({ route, method, status: String(status) });
  prometheus.httpDuration.observe({ route, method }, ms / 1000);
}
