#!/usr/bin/env node
// A fast upstream for the read benchmarks: answers every GET with the same recorded bytes and
// every POST (the OAuth token endpoint) with a token that lives an hour. Run as its own process:
//   node bench/lib/fixed-upstream.mjs --port N --body FILE --token FILE
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { port: { type: 'string' }, body: { type: 'string' }, token: { type: 'string' } },
});
const body = readFileSync(values.body);
const token = readFileSync(values.token);
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const answer = req.method === 'POST' ? token : body;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(values.port), '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
