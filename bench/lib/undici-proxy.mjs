#!/usr/bin/env node
// Baseline of the proxied read when nginx is not installed: a bare node:http server passing
// each GET to the upstream through one undici Pool (keep-alive) and the answer back.
//   node bench/lib/undici-proxy.mjs --port N --upstream URL
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({ options: { port: { type: 'string' }, upstream: { type: 'string' } } });
const pool = new Pool(values.upstream, { connections: 64, pipelining: 1 });
const server = createServer(async (req, res) => {
  try {
    const answer = await pool.request({ method: 'GET', path: req.url, headers: { accept: 'application/json' } });
    const body = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  } catch (err) {
    res.writeHead(502).end(String(err));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
