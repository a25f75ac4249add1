#!/usr/bin/env node
// Baseline of the cached read: bare Koa answering every request with the same JSON bytes.
// `--observed` is the floor of the service's cached read instead: the same, plus what an operator
// is owed for each request (SPEC 5.5, issue 9): the access line through the service's own batched
// logger and the two request metrics (core's createBatchedLogger, createPrometheusMetrics).
//   node bench/lib/koa-static.mjs --port N --body FILE [--observed]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Koa from 'koa';

const { values } = parseArgs({
  options: { port: { type: 'string' }, body: { type: 'string' }, observed: { type: 'boolean', default: false } },
});
const body = readFileSync(values.body, 'utf8');
const app = new Koa();
if (values.observed) {
  const { createBatchedLogger, createPrometheusMetrics } = await import('@opco-proxy/core/application');
  const lines = createBatchedLogger({ level: 'info' }).log;
  const { httpRequests, httpDuration } = createPrometheusMetrics();
  app.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    const ms = performance.now() - started;
    lines.info(
      {
        requestId: ctx.get('x-request-id') || 'r',
        method: ctx.method,
        route: '/{opcoId}/dossiers/etats',
        operationId: 'getDossiersEtats',
        status: ctx.status,
        ms,
        apiKey: 'bench****',
      },
      'request',
    );
    httpRequests.inc({ route: '/{opcoId}/dossiers/etats', method: ctx.method, status: String(ctx.status) });
    httpDuration.observe({ route: '/{opcoId}/dossiers/etats', method: ctx.method }, ms / 1000);
  });
}
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
const server = app.listen(Number(values.port), '127.0.0.1');
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
