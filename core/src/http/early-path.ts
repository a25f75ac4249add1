/**
 * The early path: a GET, or a POST of a submission, of an operation answering JSON, whose URL the
 * operation router has routed and validated before (`router.recall`) is served as soon as it
 * arrives, before Koa builds its context and runs the middleware chain; on this 2-core machine
 * that chain cost twice what bare Koa does per cached read, and about a quarter of an accepted
 * job's CPU (bench/RESULTS.md). Nothing is done here that the chain does otherwise: the
 * request's identity and answer headers (request-context.ts), the caller's admission, the query,
 * the body's reading (request-body.ts), the answer and its audit record (the operation's one
 * `serve`, operation-router.ts), the refusal's rendering (error-renderer.ts), the access line
 * (access-log.ts) and the request metrics (http-metrics.ts) are the same functions. It only
 * writes the answer itself, which is always JSON: the operation's reply or an error body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import type { PrometheusMetrics } from '../observability/metrics.js';
import { RawJson, type OperationRouter, type Recalled } from './operation-router.js';
import { answerHeaders, requestIdentity, type InFlight } from './request-context.js';
import { errorAnswer } from './error-renderer.js';
import { readJsonBody } from './request-body.js';
import { countRequest } from './http-metrics.js';
import type { RequestLog } from './access-log.js';

export interface EarlyPathDeps {
  router: OperationRouter;
  inFlight: InFlight;
  write: RequestLog;
  prometheus: PrometheusMetrics;
  clock: Clock;
  log: Logger;
}

/** Takes the request and returns true, or returns false having done nothing (the chain takes it). */
export function earlyPath(deps: EarlyPathDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const recalled = deps.router.recall(req.method, req.url!);
    if (!recalled) return false;
    serveEarly(deps, recalled, req, res).catch((err: unknown) => {
      deps.log.error({ err }, 'the early path failed to answer');
      res.destroy();
    });
    return true;
  };
}

async function serveEarly(
  { inFlight, write, prometheus, clock, log }: EarlyPathDeps,
  recalled: Recalled,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const started = clock.now();
  const { requestId, traceparent } = requestIdentity(req.headers);
  inFlight.enter();
  let status: number;
  try {
    let headers: Record<string, string> | undefined;
    let body: unknown;
    try {
      const limits = recalled.body;
      const readBody = limits && (() => readJsonBody(req, limits));
      ({ status, headers, body } = await recalled.serve({
        req,
        params: recalled.params,
        requestId,
        traceparent,
        query: () => recalled.query,
        readBody,
      }));
    } catch (err) {
      ({ status, headers, body } = errorAnswer(err, log, req, requestId, req.url!.split('?', 1)[0]));
    }
    // As Koa does: a connection already answered (408 to a body too slow) or gone gets nothing more.
    if (writable(res)) {
      // Encoded once: the length is the bytes' (a string would be scanned for it, then encoded to write).
      const json = body instanceof RawJson ? body.json : JSON.stringify(body);
      const bytes = typeof json === 'string' ? Buffer.from(json) : json;
      const head = answerHeaders(requestId, inFlight);
      for (const name in headers) head.push(name, headers[name]);
      head.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(bytes.length));
      res.writeHead(status, head);
      res.end(bytes);
    }
  } finally {
    inFlight.leave();
  }
  const ms = clock.now() - started;
  write({
    requestId,
    method: recalled.method,
    route: recalled.route,
    operationId: recalled.operationId,
    status,
    ms,
    apiKey: req.headers['x-api-key'],
  });
  countRequest(prometheus, recalled.route, recalled.method, status, ms);
}

function writable(res: ServerResponse): boolean {
  return !res.writableEnded && (res.socket === null || res.socket.writable);
}
