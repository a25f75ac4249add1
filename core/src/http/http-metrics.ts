/** Inbound request metrics for operators: count and duration by route template, method and status. */
import type Koa from 'koa';
import type { Clock } from '../clock.js';
import type { PrometheusMetrics } from '../metrics.js';
import { matchedRouteTemplate, type State } from './state.js';

export function httpMetrics(prometheus: PrometheusMetrics, clock: Clock): Koa.Middleware<State> {
  return async (ctx, next) => {
    const started = clock.now();
    try {
      await next();
    } finally {
      // Unmatched paths share one label: a scanner must not grow the metric without bound.
      const route = matchedRouteTemplate(ctx) ?? 'unmatched';
      prometheus.httpRequests.inc({ route, method: ctx.method, status: String(ctx.status) });
      prometheus.httpDuration.observe({ route, method: ctx.method }, (clock.now() - started) / 1000);
    }
  };
}
