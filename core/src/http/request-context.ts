/**
 * Every answer carries `Svc-Api-Version` (D27) and an `X-Request-Id` (the client's when it sent a
 * sensible one), and requests in flight are counted so that a stopping process can wait for them
 * (graceful-close.ts). While the process stops, answers ask the client to close its connection,
 * so keep-alive clients move to another instance. `requestIdentity` and `answerHeaders` do it for
 * the early path and, through `requestContext` (the first middleware), for the chain.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type Koa from 'koa';
import { API_VERSION } from '@opco-proxy/schemas';
import type { State } from './state.js';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** W3C Trace Context, version 00 or a later one (which may append fields). */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-[0-9a-f-]{0,64})?$/;

export class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];
  draining = false;

  get size(): number {
    return this.count;
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  enter(): void {
    this.count += 1;
  }

  leave(): void {
    this.count -= 1;
    if (this.count === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/** The request's id (the client's when sensible) and its well-formed trace context, if any. */
export function requestIdentity(headers: IncomingHttpHeaders): { requestId: string; traceparent?: string } {
  const sent = headers['x-request-id'];
  const requestId = typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
  const sentTrace = headers.traceparent;
  const traceparent = typeof sentTrace === 'string' ? sentTrace.trim().toLowerCase() : undefined;
  return traceparent && TRACEPARENT.test(traceparent) ? { requestId, traceparent } : { requestId };
}

/** The headers every answer carries, as a flat list of names and values (what `writeHead` takes as is). */
export function answerHeaders(requestId: string, inFlight: InFlight): string[] {
  const head = ['Svc-Api-Version', API_VERSION, 'X-Request-Id', requestId];
  if (inFlight.draining) head.push('Connection', 'close');
  return head;
}

export function requestContext(inFlight: InFlight): Koa.Middleware<State> {
  return async (ctx, next) => {
    const { requestId, traceparent } = requestIdentity(ctx.headers);
    ctx.state.requestId = requestId;
    if (traceparent) ctx.state.traceparent = traceparent;
    inFlight.enter();
    try {
      await next();
    } finally {
      // Set once the answer is decided (no middleware sends its head before), as draining may have begun.
      const head = answerHeaders(requestId, inFlight);
      for (let i = 0; i < head.length; i += 2) ctx.set(head[i], head[i + 1]);
      inFlight.leave();
    }
  };
}
