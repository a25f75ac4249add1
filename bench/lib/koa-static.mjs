#!/usr/bin/env node
// Baseline of the cached read: bare Koa answering every request with the same JSON bytes.
// `--observed` is the floor of the service's cached read instead: the same, plus what an operator
// is owed for each request (SPEC 5.5, issue 9): the access line through the service's own batched
// logger and the two request metrics (core's createBatchedLogger, createPrometheusMetrics), the
// duration in whole milliseconds as the service's clock gives it. `--bare` answers with node:http
// alone, as the service's early path does, rather than Koa: with `--observed`, the floor of a
// cached read that costs nothing but what is owed (issue 40's goal 4 asks >= 1.0x bare Koa).
//   node bench/lib/koa-static.mjs --port N --body FILE [--observed] [--bare]
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import Koa from 'koa';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    body: { type: 'string' },
    observed: { type: 'boolean', default: false },
    bare: { type: 'boolean', default: false },
  },
});
const body = readFileSync(values.body, 'utf8');
const ROUTE = '/{opcoId}/dossiers/etats';

/** What each request owes (the access line, the two request metrics), or nothing without --observed. */
async function observer() {
  if (!values.observed) return undefined;
  const { createBatchedLogger, createPrometheusMetrics } = await import('@opco-proxy/core/application');
  const lines = createBatchedLogger({ level: 'info' }).log;
  const { httpRequests, httpDuration } = createPrometheusMetrics();
  return (requestId, method, status, ms) => {
    lines.info(
      { requestId, method, route: ROUTE, operationId: 'getDossiersEtats', status, ms, apiKey: 'bench****' },
      'request',
    );
    httpRequests.inc({ route: ROUTE, method, status: String(status) });
    httpDuration.observe({ route: ROUTE, method }, ms / 1000);
  };
}

const observe = await observer();
let server;
if (values.bare) {
  const bytes = Buffer.from(body);
  const head = ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(bytes.length)];
  server = createServer((req, res) => {
    const started = Date.now();
    res.writeHead(200, head);
    res.end(bytes);
    observe?.(req.headers['x-request-id'] || 'r', req.method, 200, Date.now() - started);
  });
  server.listen(Number(values.port), '127.0.0.1');
} else {
  const app = new Koa();
  if (observe)
    app.use(async (ctx, next) => {
      const started = Date.now();
      await next();
      observe(ctx.get('x-request-id') || 'r', ctx.method, ctx.status, Date.now() - started);
    });
  app.use((ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
  server = app.listen(Number(values.port), '127.0.0.1');
}
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
