// Issue 38, point 6: what a slow or greedy client may hold of the HTTP server (connection-limits.ts),
// over real sockets with short limits: a stalled body and a trickled one are answered 408 and
// closed, a body the service is slow to read is not the client's fault, a client that ignores
// the answer is closed anyway, and one address over the cap is answered 429 at accept.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ConfigError, TrustedProxies } from '../src/application.js';
import { answerClientErrors } from '../src/http/client-errors.js';
import {
  createGuardedServer,
  httpServerOptions,
  serverLimits,
  SERVER_LIMITS,
  type GuardOptions,
  type ServerLimits,
} from '../src/http/connection-limits.js';

const SHORT: ServerLimits = {
  headersTimeoutMs: 1000,
  requestTimeoutMs: 20_000,
  bodyIdleTimeoutMs: 1000,
  minBodyBytesPerSecond: 0,
  keepAliveTimeoutMs: 1000,
  maxConnectionsPerAddress: 0,
};

/** A server that reads each body whole (after `readAfterMs`), then answers 200 with its length. */
async function serve(t: Test, limits: Partial<ServerLimits>, options: GuardOptions & { readAfterMs?: number } = {}) {
  const registry = new Registry();
  const server: Server = createGuardedServer(
    { ...SHORT, ...limits },
    (req, res) => {
      setTimeout(() => {
        let length = 0;
        req.on('data', (chunk: Buffer) => (length += chunk.length));
        req.on('end', () => res.end(String(length)));
        req.on('error', () => {});
      }, options.readAfterMs ?? 0);
    },
    { registry, ...options },
  );
  answerClientErrors(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const closed = async (reason: string) =>
    (await registry.getSingleMetric('opco_proxy_connections_closed_total')!.get()).values.find(
      (v) => v.labels.reason === reason,
    )?.value ?? 0;
  return { port: (server.address() as AddressInfo).port, closed };
}

interface Client {
  socket: Socket;
  text(): string;
  /** ms from connect until the service ended the connection (FIN or reset), and until it was closed whole. */
  ended: Promise<number>;
  closed: Promise<number>;
}

/**
 * A socket that keeps its side open whatever it is answered, and writes on once the service has
 * ended (as an attacker does): the reset of its writes tells when the service closed it whole.
 */
function client(port: number, localAddress = '127.0.0.1'): Client {
  const socket = new Socket({ allowHalfOpen: true });
  const started = performance.now();
  let text = '';
  let probing: NodeJS.Timeout | undefined;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => {});
  const ended = new Promise<number>((resolve) => {
    socket.once('end', () => {
      probing = setInterval(() => socket.writable && socket.write('X'), 100);
      resolve(performance.now() - started);
    });
    socket.once('close', () => resolve(performance.now() - started));
  });
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(probing);
      resolve(performance.now() - started);
    }),
  );
  socket.connect({ port, host: '127.0.0.1', localAddress });
  return { socket, text: () => text, ended, closed };
}

const POST = (length: number) =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

t.test(
  "the defaults are the schema's; the config overrides them; headers longer than the request are refused",
  async (t) => {
    t.same(SERVER_LIMITS, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      bodyIdleTimeoutMs: 10_000,
      minBodyBytesPerSecond: 1024,
      keepAliveTimeoutMs: 5000,
      maxConnectionsPerAddress: 64,
    });
    t.same(serverLimits({ server: { keepAliveTimeoutMs: 65_000 } }), { ...SERVER_LIMITS, keepAliveTimeoutMs: 65_000 });
    t.same(httpServerOptions(SERVER_LIMITS), {
      headersTimeout: 10_000,
      requestTimeout: 120_000,
      keepAliveTimeout: 5000,
      connectionsCheckingInterval: 1000,
    });
    t.throws(() => serverLimits({ server: { headersTimeoutMs: 60_000, requestTimeoutMs: 30_000 } }), ConfigError);
  },
);

t.test(
  'headers never finished: 408 within the headers timeout and a check, and closed soon after even if the client trickles on',
  async (t) => {
    const { port, closed } = await serve(t, {});
    const slow = client(port);
    slow.socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => slow.socket.write('X'), 200);
    t.teardown(() => clearInterval(trickle));
    const ended = await slow.ended;
    t.match(slow.text(), /^HTTP\/1\.1 408 /, 'answered 408');
    t.match(slow.text(), /"code":"VALIDATION_ERROR"/, 'in the error body');
    t.ok(ended < 2600, `ended after ${ended.toFixed(0)} ms`);
    const gone = await slow.closed;
    t.ok(gone < ended + 2500, `and closed whole ${(gone - ended).toFixed(0)} ms later, though it kept writing`);
    t.equal(await closed('headers-timeout'), 1);
  },
);

t.test('a body that stops coming is answered 408 and closed', async (t) => {
  const { port, closed } = await serve(t, {});
  const stalled = client(port);
  stalled.socket.write(POST(100) + '{"a":');
  const ended = await stalled.ended;
  t.match(stalled.text(), /^HTTP\/1\.1 408 /);
  t.ok(ended >= 900 && ended < 2600, `after ${ended.toFixed(0)} ms`);
  await stalled.closed;
  t.equal(await closed('body-stalled'), 1);
});

t.test(
  'a body trickled below the minimum rate is answered 408 once waited for the idle timeout; one at the rate is not',
  async (t) => {
    const { port, closed } = await serve(t, { bodyIdleTimeoutMs: 1000, minBodyBytesPerSecond: 100 });
    const slow = client(port);
    slow.socket.write(POST(10_000));
    const trickle = setInterval(() => slow.socket.write('          '.slice(0, 5)), 200); // 25 bytes a second
    t.teardown(() => clearInterval(trickle));
    const fair = client(port);
    fair.socket.write(POST(600));
    let sent = 0;
    const steady = setInterval(() => {
      if (sent < 600) fair.socket.write(' '.repeat(40)); // 200 bytes a second
      sent += 40;
    }, 200);
    t.teardown(() => clearInterval(steady));
    const ended = await slow.ended;
    clearInterval(trickle);
    t.match(slow.text(), /^HTTP\/1\.1 408 /, 'the trickle');
    t.ok(ended < 3000, `after ${ended.toFixed(0)} ms`);
    await fair.ended;
    t.match(fair.text(), /^HTTP\/1\.1 200 [^]*\r\n\r\n600$/, 'the steady body is read whole');
    t.equal(await closed('body-too-slow'), 1);
  },
);

t.test("time the service takes before reading a body is not the client's", async (t) => {
  const { port } = await serve(t, { bodyIdleTimeoutMs: 1000, minBodyBytesPerSecond: 1_000_000 }, { readAfterMs: 2500 });
  const patient = client(port);
  patient.socket.write(POST(50_000) + ' '.repeat(50_000));
  await patient.ended;
  t.match(patient.text(), /^HTTP\/1\.1 200 [^]*\r\n\r\n50000$/, 'answered once read, 2.5 s later');
});

t.test(
  'an address over the cap is answered 429 at accept; others are not; trusted proxies are not counted',
  async (t) => {
    const { port, closed } = await serve(t, { maxConnectionsPerAddress: 2, headersTimeoutMs: 5000 });
    const held = [client(port, '127.0.0.2'), client(port, '127.0.0.2')];
    t.teardown(() => held.forEach((c) => c.socket.destroy()));
    await Promise.all(held.map((c) => once(c.socket, 'connect')));
    const third = client(port, '127.0.0.2');
    third.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const ended = await third.ended;
    t.ok(ended < 500, `at once: ${ended.toFixed(0)} ms`);
    t.match(third.text(), /^HTTP\/1\.1 429 Too Many Requests\r\n/);
    t.match(third.text(), /\r\nRetry-After: 1\r\n/);
    t.match(
      third.text(),
      /"code":"RATE_LIMITED","description":"too many connections from this address: at most 2 at once/,
    );
    const other = client(port, '127.0.0.3');
    other.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await other.ended;
    t.match(other.text(), /^HTTP\/1\.1 200 /, `another address is served: ${other.text().slice(0, 40)}`);
    t.equal(await closed('per-address-cap'), 1);

    const behind = await serve(t, { maxConnectionsPerAddress: 1 }, { proxies: new TrustedProxies(['127.0.0.4']) });
    const balancer = [client(behind.port, '127.0.0.4'), client(behind.port, '127.0.0.4')];
    t.teardown(() => balancer.forEach((c) => c.socket.destroy()));
    for (const c of balancer) c.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await Promise.all(balancer.map((c) => c.ended));
    t.same(
      balancer.map((c) => c.text().slice(0, 12)),
      ['HTTP/1.1 200', 'HTTP/1.1 200'],
      'the trusted proxy holds more than the cap',
    );
  },
);

t.test('alone (no client-errors.ts, as the metrics listener), a timeout is a bare 408', async (t) => {
  const server = createGuardedServer(SHORT, (_req, res) => res.end());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => server.close());
  const silent = client((server.address() as AddressInfo).port);
  await silent.ended;
  t.match(silent.text(), /^HTTP\/1\.1 408 Request Timeout\r\n/);
});
