// The delivery worker's keep-alive agents, one pair per callback origin (destinations.ts, D24): what an origin
// is, that its connection is reused and closed on stop, and that the memory of origins stays bounded without
// ever dropping the agents of an attempt in flight.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import t from 'tap';
import { Destinations, originOf } from '../src/destinations.js';

t.test('an origin is the scheme, host and port of a callback URL; a URL that does not parse has none', async (t) => {
  const full = 'https://Hooks.Example.com:443/opco/events?x=1#y';
  t.equal(originOf(full), 'https://hooks.example.com', 'host lowercased, default port dropped');
  t.equal(originOf('http://127.0.0.1:8080/hook'), 'http://127.0.0.1:8080');
  t.equal(originOf('https://a.example:8443/one'), originOf('https://a.example:8443/two'), 'the path is not part of it');
  t.not(originOf('http://a.example:8443/'), originOf('https://a.example:8443/'), 'nor is the scheme left out');
  t.equal(originOf('not a url'), null);
  t.equal(originOf(''), null);
});

t.test("one pair of keep-alive agents per origin, bounded by the worker's slots, idle after 30 s", async (t) => {
  const destinations = new Destinations(4);
  t.teardown(() => destinations.close());
  const a = destinations.use('https://a.example');
  t.equal(destinations.use('https://a.example'), a, 'the same agents for the same origin');
  t.not(destinations.use('https://b.example'), a, 'another origin has its own');
  // node's Agent keeps its options there; @types/node does not show them.
  for (const agent of [a.http, a.https] as unknown as { keepAlive: boolean; maxSockets: number; options: object }[]) {
    t.equal(agent.keepAlive, true);
    t.equal(agent.maxSockets, 4);
    t.match(agent.options, { keepAlive: true, maxSockets: 4, timeout: 30_000 });
  }
});

t.test('the connection of an origin is reused by its next attempt and closed when the worker stops', async (t) => {
  const serverSockets: Socket[] = [];
  const clientSockets: Socket[] = [];
  const server = http.createServer((_req, res) => res.end('ok'));
  // Idle connections are kept by the server far longer than the test: only close() can end them.
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => void serverSockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const destinations = new Destinations(2);
  const post = () =>
    new Promise<number>((resolve, reject) => {
      const agents = destinations.use(origin);
      const req = http.request(`${origin}/hook`, { method: 'POST', agent: agents.http }, (res) => {
        res.resume();
        res.on('end', () => {
          destinations.release(origin);
          resolve(res.statusCode ?? 0);
        });
      });
      req.on('socket', (socket: Socket) => void clientSockets.push(socket));
      req.on('error', reject).end('{}');
    });
  t.same([await post(), await post()], [200, 200]);
  t.equal(serverSockets.length, 1, 'one connection for both');
  t.equal(clientSockets[1], clientSockets[0]);
  t.equal(clientSockets[0].destroyed, false, 'kept open between attempts');
  destinations.close();
  t.equal(clientSockets[0].destroyed, true, 'closed by close()');
  t.equal(await post(), 200, 'a later attempt opens a new one');
  t.equal(serverSockets.length, 2);
  destinations.close();
});

t.test('past 1000 origins the least recently used idle one is forgotten; in use or used lately stays', async (t) => {
  const destinations = new Destinations(1);
  t.teardown(() => destinations.close());
  const origin = (n: number) => `https://receiver-${n}.example`;
  const held = destinations.use(origin(0)); // an attempt in flight: never released here
  const agents = [held];
  for (let n = 1; n < 1000; n++) {
    agents.push(destinations.use(origin(n)));
    destinations.release(origin(n));
  }
  // receiver-1 used again: the most recently used now.
  destinations.use(origin(1));
  destinations.release(origin(1));
  destinations.use(origin(1000));
  destinations.release(origin(1000));

  t.equal(destinations.use(origin(0)), held, 'the origin in use keeps its agents');
  t.equal(destinations.use(origin(1)), agents[1], 'the one used lately keeps its agents');
  t.equal(destinations.use(origin(3)), agents[3], 'the next idle one is still known');
  // receiver-2 was the least recently used idle origin: asking for it builds new agents.
  t.not(destinations.use(origin(2)), agents[2], 'the least recently used idle one was forgotten');
});

t.test('a new origin while every known one is in use keeps its agents until it is released', async (t) => {
  const destinations = new Destinations(1);
  t.teardown(() => destinations.close());
  const origin = (n: number) => `https://busy-${n}.example`;
  for (let n = 0; n < 1000; n++) destinations.use(origin(n));
  const fresh = destinations.use(origin(1000));
  t.equal(destinations.use(origin(1000)), fresh, 'the new origin is remembered, not forgotten at once');
  destinations.release(origin(1000));
  destinations.release(origin(1000));
  t.equal(destinations.use(origin(1000)), fresh, 'released, it is still the one close will destroy');
});
