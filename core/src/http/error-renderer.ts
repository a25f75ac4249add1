/**
 * Every error leaves in the body of SPEC 7, mapped once by `asServiceError`: validation, auth,
 * unknown routes (404), a wrong method on a known path (405 with `Allow`), a method no route takes
 * on any path (501), outages (503 with `Retry-After`) and anything unexpected (500, logged with
 * its cause, never shown). `errorAnswer` renders it, for the middleware chain and the early path.
 */
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import { asServiceError, createError, toErrorBody, type ErrorBody } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import { closeLingering } from './lingering-close.js';
import type { State } from './state.js';

export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/** The answer to a request that failed with `err`; unexpected errors and outages are logged. */
export function errorAnswer(
  err: unknown,
  log: Logger,
  req: IncomingMessage,
  requestId: string,
  path: string,
): ErrorAnswer {
  const error = asServiceError(err);
  if (error.code === 'INTERNAL_ERROR') {
    log.error({ err: error.cause ?? err, requestId, path }, 'unexpected error');
  } else if (error.code === 'UNAVAILABLE') {
    log.warn({ err: error.cause, requestId, path }, 'backend unavailable');
  }
  const headers = { ...error.headers };
  // Refused before its body was read (too large, not JSON, no key): the rest of the body is
  // still on the connection, so it cannot carry another request; it is read and dropped for a
  // while after the answer, so that a client still sending it gets to read the answer.
  if (!req.complete) {
    headers.Connection = 'close';
    closeLingering(req);
  }
  return { status: error.status, headers, body: toErrorBody(error) };
}

export function renderErrors(log: Logger): Koa.Middleware<State> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 405 && ctx.body === undefined) {
        throw createError(
          'METHOD_NOT_ALLOWED',
          `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`,
        );
      }
      if (ctx.status === 404 && ctx.body === undefined)
        throw createError('NOT_FOUND', `no route ${ctx.method} ${ctx.path}`);
      // A method Node's parser knows but no route takes (TRACE, PROPFIND, M-SEARCH): the router
      // answers a bare 501 whatever the path, with the path's methods in `Allow`, empty when the
      // path is unknown (which would say the path takes no method at all).
      if (ctx.status === 501 && ctx.body === undefined) {
        if (!ctx.response.get('Allow')) ctx.remove('Allow');
        throw createError('NOT_SUPPORTED', `the HTTP method ${ctx.method} is not supported by this service`);
      }
    } catch (err) {
      const answer = errorAnswer(err, log, ctx.req, ctx.state.requestId, ctx.path);
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = answer.body;
    }
  };
}
