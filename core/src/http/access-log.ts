/**
 * One log line per request, written after the error renderer so it shows the status the client
 * got (SPEC 5.5: the API key masked). The route is the template (`/{opcoId}/jobs/{jobId}`), so
 * logs group by route without leaking ids.
 */
import type Koa from 'koa';
import { maskApiKey } from '../tenant.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { matchedRouteTemplate, type State } from './state.js';

export function accessLog(log: Logger, clock: Clock): Koa.Middleware<State> {
  // Its fields are these, built here, the key masked: the logger's redaction (paths searched in
  // every logged object) would find nothing and cost a sixth of a cached read's CPU.
  const lines = log.child({}, { redact: [] });
  return async (ctx, next) => {
    const started = clock.now();
    try {
      await next();
    } finally {
      const key = ctx.get('x-api-key');
      lines.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route: matchedRouteTemplate(ctx) ?? null,
          operationId: ctx.state.operationId,
          status: ctx.status,
          ms: clock.now() - started,
          apiKey: key ? maskApiKey(key) : undefined,
        },
        'request',
      );
    }
  };
}
