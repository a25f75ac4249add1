// One attempt's HTTP exchange (notification-post.ts) against real local receivers: the status once
// the answer is read, no redirect followed, a receiver that never answers or cuts its answer off
// is a failed attempt (never a hang), and a keep-alive connection is reused.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, LookupFunction } from 'node:net';
import t, { type Test } from 'tap';
import { systemClock } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { eventually } from '@opco-proxy/core/eventually';
import { guardedLookup } from '../src/ssrf.js';
import { postNotification, type PostOptions } from '../src/notification-post.js';

interface Seen {
  method?: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  socket: unknown;
}

const seen: Seen[] = [];
let answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok');
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    seen.push({ method: req.method, headers: req.headers, body, socket: req.socket });
    answer(req, res);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 2 }),
  https: new https.Agent({ keepAlive: true }),
};
t.teardown(() => {
  agents.http.destroy();
  agents.https.destroy();
  server.closeAllConnections();
  server.close();
});
const post = (path: string, timeoutMs = 5000, clock: PostOptions['clock'] = systemClock) =>
  postNotification(
    new URL(`${base}${path}`),
    '{"event":"webhook.test"}',
    { 'content-type': 'application/json', 'svc-event': 'webhook.test' },
    { agents, clock, lookup: guardedLookup('development'), timeoutMs },
  );

/**
 * The deadlines are timers of the clock given: a frozen one, moved once the receiver holds the
 * request, shows the attempt ends at the deadline, not before.
 */
async function atDeadline(t: Test, clock: TestClock, attempt: Promise<number>, ms: number): Promise<void> {
  let ended = false;
  attempt.then(
    () => (ended = true),
    () => (ended = true),
  );
  await eventually(() => seen.length === 1, 'the request received');
  await clock.advance(ms - 1);
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(ended, 'still waiting a millisecond before the deadline');
  await clock.advance(1);
}

t.beforeEach(() => {
  seen.length = 0;
  answer = (_req, res) => res.end('ok');
});

t.test('the status once the answer is read, the body and headers as given, the connection kept', async (t) => {
  answer = (_req, res) => res.writeHead(204).end();
  t.equal(await post('/a'), 204);
  answer = (_req, res) => res.writeHead(503).end('busy');
  t.equal(await post('/b'), 503, 'a failure status is an answer, not an error');
  t.equal(seen[0].method, 'POST');
  t.equal(seen[0].body, '{"event":"webhook.test"}');
  t.equal(seen[0].headers['content-length'], '24');
  t.equal(seen[0].headers['svc-event'], 'webhook.test');
  t.equal(seen[1].socket, seen[0].socket, "the second went on the first one's connection");
});

t.test('a redirect is the answer: never followed', async (t) => {
  answer = (_req, res) => res.writeHead(302, { location: `${base}/elsewhere` }).end();
  t.equal(await post('/moved'), 302);
  t.equal(seen.length, 1);
});

t.test('a receiver that never answers fails the attempt after its timeout', async (t) => {
  answer = () => {};
  const clock = new TestClock({ frozen: true });
  // A minute: on real time the test would time out first.
  const attempt = post('/silent', 60_000, clock);
  await atDeadline(t, clock, attempt, 60_000);
  await t.rejects(attempt, { name: 'TimeoutError', message: 'no answer within 60000 ms' });
});

t.test('an answer that stops in the middle of its body times out too', async (t) => {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
  };
  const clock = new TestClock({ frozen: true });
  const attempt = post('/stalled', 200, clock);
  await atDeadline(t, clock, attempt, 200);
  await t.rejects(attempt, { name: 'TimeoutError', message: 'no answer within 200 ms' });
});

t.test('an answer cut off in the middle fails the attempt', async (t) => {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
    setImmediate(() => res.destroy());
  };
  await t.rejects(post('/cut'));
});

t.test('a refused address is an ESSRF error, and nothing is sent', async (t) => {
  const production = guardedLookup('production', async () => [{ address: '127.0.0.1', family: 4 }]);
  const url = new URL(`http://refused.example:${(server.address() as AddressInfo).port}/x`);
  await t.rejects(
    postNotification(
      url,
      '{}',
      {},
      {
        agents: { http: new http.Agent(), https: agents.https },
        clock: systemClock,
        lookup: production,
        timeoutMs: 5000,
      },
    ),
    { code: 'ESSRF' },
  );
  t.equal(seen.length, 0);
});

// Issue 38 point 4: a receiver that accepts and never answers frees its slot at the headers'
// deadline, one that cannot be reached at the connection's, both well within the attempt's 10 s.
t.test("the answer's headers have a deadline of their own, shorter than the attempt's", async (t) => {
  answer = () => {};
  const clock = new TestClock({ frozen: true });
  const timed = postNotification(
    new URL(`${base}/mute`),
    '{}',
    {},
    { agents, clock, lookup: guardedLookup('development'), timeoutMs: 10_000, headersTimeoutMs: 200 },
  );
  await atDeadline(t, clock, timed, 200);
  await t.rejects(timed, { name: 'TimeoutError', message: 'no answer within 200 ms' }, "at the headers' deadline");
});

t.test("headers in time, a body that never ends: the attempt's own deadline", async (t) => {
  answer = (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
  };
  const clock = new TestClock({ frozen: true });
  const attempt = postNotification(
    new URL(`${base}/slow-body`),
    '{}',
    {},
    { agents, clock, lookup: guardedLookup('development'), timeoutMs: 400, headersTimeoutMs: 200 },
  );
  await atDeadline(t, clock, attempt, 400);
  await t.rejects(attempt, { name: 'TimeoutError', message: 'no answer within 400 ms' });
});

t.test("no connection in time: the connection's deadline", async (t) => {
  // A lookup that never answers: the socket stays connecting.
  const never: LookupFunction = () => {};
  const fresh = { http: new http.Agent({ keepAlive: true }), https: new https.Agent() };
  t.teardown(() => fresh.http.destroy());
  const clock = new TestClock({ frozen: true });
  const attempt = postNotification(
    new URL('http://unreachable.example/x'),
    '{}',
    {},
    { agents: fresh, clock, lookup: never, timeoutMs: 10_000, headersTimeoutMs: 5000, connectTimeoutMs: 150 },
  );
  const refused = t.rejects(attempt, { name: 'TimeoutError', message: 'no connection within 150 ms' });
  await clock.advance(150);
  await refused;
});

t.test('a reused connection is connected already: only the other deadlines count', async (t) => {
  answer = (_req, res) => setTimeout(() => res.end('ok'), 100);
  // Warm the keep-alive connection, then a connect deadline shorter than the answer's delay.
  t.equal(await post('/warm'), 200);
  t.equal(
    await postNotification(
      new URL(`${base}/again`),
      '{}',
      {},
      { agents, clock: systemClock, lookup: guardedLookup('development'), timeoutMs: 5000, connectTimeoutMs: 50 },
    ),
    200,
  );
});
