#!/usr/bin/env node
// Baseline of the cached read: bare Koa answering every request with the same JSON bytes.
//   node bench/lib/koa-static.mjs --port N --body FILE
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Koa from 'koa';

const { values } = parseArgs({ options: { port: { type: 'string' }, body: { type: 'string' } } });
const body = readFileSync(values.body, 'utf8');
const app = new Koa();
app.use((ctx) => {
  ctx.type = 'application/json';
  ctx.body = body;
});
const server = app.listen(Number(values.port), '127.0.0.1');
server.keepAliveTimeout = 60_000;
process.on('SIGTERM', () => process.exit(0));
