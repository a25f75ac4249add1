/**
 * The read shortcut: a GET the process can answer from memory (a cache hit) is answered as soon
 * as it arrives, before Koa builds its context and the middleware chain runs. On this 2-core
 * machine that chain cost twice what bare Koa does per cached read (bench/RESULTS.md).
 *
 * It answers only a URL the operation router has routed and validated before, for a caller whose
 * key the router accepts and whose rate allows it; it writes what the chain would have (the
 * identity headers, X-Cache, the JSON text as kept), one access line and the request metrics.
 * Anything else (a miss, a refusal, an error) goes the whole way, which checks everything again
 * and renders the refusal: the shortcut never answers an error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../clock.js';
import type { PrometheusMetrics } from '../metrics.js';
import type { OperationRouter } from './operation-router.js';
import type { InFlight } from './request-context.js';
import { API_VERSION } from '@opco-proxy/schemas';
import { requestIdentity } from './request-context.js';
import { countRequest } from './http-metrics.js';
import type { RequestLog } from './access-log.js';

export interface ReadShortcutDeps {
  router: OperationRouter;
  inFlight: InFlight;
  write: RequestLog;
  prometheus: PrometheusMetrics;
  clock: Clock;
}

/** Answers the request and returns true, or returns false having written nothing. */
export function readShortcut({ router, inFlight, write, prometheus, clock }: ReadShortcutDeps): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (req.method !== 'GET') return false;
    const started = clock.now();
    const { requestId, traceparent } = requestIdentity(req.headers);
    const answer = router.answerAtOnce(req, requestId, traceparent);
    if (!answer) return false;
    const { status, body, headers = {} } = answer.reply;
    // A flat list: Node writes it without walking an object's keys.
    const head: Array<string | number> = ['Svc-Api-Version', API_VERSION, 'X-Request-Id', requestId];
    for (const name in headers) head.push(name, headers[name]);
    head.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', Buffer.byteLength(body.json));
    // A stopping process asks keep-alive clients to move on, as the chain does.
    if (inFlight.draining) head.push('Connection', 'close');
    res.writeHead(status, head as unknown as string[]);
    res.end(body.json);
    const ms = clock.now() - started;
    write({ requestId, method: 'GET', route: answer.route, operationId: answer.operationId, status, ms, apiKey: req.headers['x-api-key'] });
    countRequest(prometheus, answer.route, 'GET', status, ms);
    return true;
  };
}
