/**
 * One log line per request, written after the error renderer so it shows the status the client
 * got (SPEC 5.5: the API key masked). The route is the template (`/{opcoId}/jobs/{jobId}`), so
 * logs group by route without leaking ids.
 */
import type Koa from 'koa';
import { maskApiKey } from './tenant.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import { matchedRouteTemplate, type State } from './state.js';

export interface RequestLine {
  requestId: string;
  method: string;
  route: string | null;
  operationId?: string;
  status: number;
  ms: number;
  apiKey: string | string[] | undefined;
}

export type RequestLog = (line: RequestLine) => void;

/** Writes access lines, the middleware chain's and the early path's alike. */
export function requestLog(log: Logger): RequestLog {
  // Its fields are these, built here, the key masked: the logger's redaction (paths searched in
  // every logged object) would find nothing and cost a sixth of a cached read's CPU.
  const lines = log.child({}, { redact: [] });
  return (line) => {
    const key = Array.isArray(line.apiKey) ? line.apiKey[0] : line.apiKey;
    line.apiKey = key ? maskApiKey(key) : undefined;
    lines.info(line, 'request');
  };
}

export function accessLog(write: RequestLog, clock: Clock): Koa.Middleware<State> {
  return async (ctx, next) => {
    const started = clock.now();
    try {
      await next();
    } finally {
      write({
        requestId: ctx.state.requestId,
        method: ctx.method,
        route: matchedRouteTemplate(ctx) ?? null,
        operationId: ctx.state.operationId,
        status: ctx.status,
        ms: clock.now() - started,
        apiKey: ctx.headers['x-api-key'],
      });
    }
  };
}
