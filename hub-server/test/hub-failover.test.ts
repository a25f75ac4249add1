// Two hubs on one MongoDB store (issue 31, failover), in this process on the real clock: the
// standby refuses instances with 503 and names the leader in /health and GET /admin/limits; an
// instance given both addresses ends up on the leader; when the leader stops, the standby takes
// the lease, loads the grant journal (the old leader's grants still count) and the instance moves
// over. The kill -9 of a hub process under load is e2e/test/hub-failover.test.ts.
import t from 'tap';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { type Store } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createStore as createMongoStore } from '@opco-proxy/driver-mongodb';
import { parseHubConfig } from '../src/index.js';
import { admissionFor, eventually, request, startTestHub, type TestHub } from './fixtures/hub-harness.js';

const FAILOVER = { leaseMs: 1500, renewMs: 300 };
const RATE = { limit: 5, windowMs: 60_000 };

t.test('failover needs a shared store and a renewal well within the lease', async (t) => {
  const opcos = {};
  t.throws(
    () => parseHubConfig({ opcos, failover: {} }),
    /failover: needs a store both hubs share: store.type must be mongodb/,
  );
  t.throws(
    () =>
      parseHubConfig({
        opcos,
        store: { type: 'mongodb', url: 'mongodb://db' },
        failover: { leaseMs: 3000, renewMs: 1500 },
      }),
    /failover.renewMs: must be at most a third of failover.leaseMs \(3000\)/,
  );
  t.throws(
    () => parseHubConfig({ opcos, store: { type: 'mongodb', url: 'mongodb://db' }, failover: { leaseMs: 10 } }),
    /failover\/leaseMs|failover.leaseMs/,
  );
  t.match(
    parseHubConfig({ store: { type: 'mongodb', url: 'mongodb://db' }, failover: { url: 'ws://hub-a:8090' } }).failover,
    { url: 'ws://hub-a:8090', leaseMs: 10_000, renewMs: 3000 },
    'defaults',
  );
  t.equal(parseHubConfig({}).failover, undefined, 'no failover: the hub leads alone');
});

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The status a WebSocket upgrade is answered with, and the body of a refusal. */
function upgrade(url: string, key: string): Promise<{ status: number; body?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?apiKey=${key}`);
    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => (req.destroy(), resolve({ status: res.statusCode ?? 0, body })));
    });
    ws.on('open', () => (ws.close(), resolve({ status: 101 })));
    ws.on('error', () => undefined);
  });
}

t.test(
  'an instance tries its addresses in turn, every 500 ms at most while one of them answers 503 (a standby)',
  async (t) => {
    const standby = createHttpServer().listen(0, '127.0.0.1');
    standby.on('upgrade', (_req, socket) =>
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
    );
    await once(standby, 'listening');
    t.teardown(() => standby.close());
    const standbyUrl = `ws://127.0.0.1:${(standby.address() as { port: number }).port}`;
    const deadUrl = `ws://127.0.0.1:${await freePort()}`; // a killed leader: nothing listens
    const clock = new TestClock({ frozen: true });
    const logs: string[] = [];
    const { admission } = admissionFor('', 'hk_none', { url: [deadUrl, standbyUrl] }, logs, undefined, clock);
    t.teardown(() => admission.close());
    const tries = () =>
      logs.filter((line) => line.includes('hub connection failed')).map((line) => JSON.parse(line).hub as string);
    await eventually(() => tries().length === 1, 'the first try');
    // Without the standby's 503 the pause would double up to 5 s; with it, each 500 ms bring one more try.
    for (let n = 2; n <= 16; n++) {
      await clock.advance(500);
      await eventually(() => tries().length === n && admission.state === 'disconnected', `try ${n} to fail`);
    }
    t.same(
      tries(),
      Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? deadUrl : standbyUrl)),
      'the two addresses in turn',
    );
  },
);

const url = process.env.MONGODB_URL;
t.test(
  'the standby refuses instances and names the leader; it takes over with the journal when the leader stops',
  { skip: url ? false : 'needs MONGODB_URL' },
  async (t) => {
    const store: Store = await createMongoStore({ url: url!, database: 'hub_failover_test' });
    t.teardown(() => store.close());
    for (const name of ['hub_leader', 'hub_grants', 'hub_keys']) await store.collection(name).deleteMany({});
    const start = async (): Promise<TestHub> => {
      const port = await freePort();
      const hub = await startTestHub({
        store,
        port,
        opcos: { op: RATE },
        config: { store: { type: 'mongodb', url }, failover: { url: `ws://127.0.0.1:${port}`, ...FAILOVER } },
      });
      t.teardown(() => hub.close());
      return hub;
    };
    const a = await start();
    const b = await start();
    const idOf = async (hub: TestHub) => (await hub.admin('GET', '/health', undefined, null)).body.leader?.id;
    t.match((await a.admin('GET', '/health', undefined, null)).body, {
      status: 'ok',
      role: 'leader',
      leader: { url: a.url.replace('http', 'ws'), expiresAt: String },
    });
    const aId = await idOf(a);
    t.match(
      (await b.admin('GET', '/health', undefined, null)).body,
      { status: 'ok', role: 'standby', leader: { id: aId, url: a.url.replace('http', 'ws') } },
      'the standby names the leader',
    );
    t.match((await b.admin('GET', '/admin/limits')).body, { role: 'standby', leader: { id: aId }, limits: [] });

    const { key } = await a.key('pub');
    const refused = await upgrade(b.url, key);
    t.equal(refused.status, 503, 'the standby refuses the upgrade');
    t.match(refused.body, /not leader: this hub stands by; the leader is/);
    t.equal((await upgrade(a.url, key)).status, 101, 'the leader accepts it');

    // Given both addresses, standby first: the instance ends up on the leader.
    const { admission } = admissionFor(b.url, key, {}, [], 'instance-1');
    t.teardown(() => admission.close());
    const both = admissionFor(
      '',
      key,
      { url: [b.url.replace('http', 'ws'), a.url.replace('http', 'ws')] },
      [],
      'instance-2',
    );
    t.teardown(() => both.admission.close());
    await eventually(() => both.admission.state === 'connected', 'the instance with both addresses to connect');
    t.equal(both.admission.connection.url, a.url.replace('http', 'ws'), 'on the leader');
    t.notOk(admission.state === 'connected', 'the one given only the standby is not connected');
    // A grant of an instance that then goes: only the journal can tell the next leader about it.
    const gone = admissionFor(a.url, key, {}, [], 'instance-3');
    await eventually(() => gone.admission.state === 'connected', 'the third instance to connect');
    const lease = await gone.admission.admit(request({ rateLimit: RATE }));
    t.match(lease.headers['Svc-Hub-Token'], /^ey/, 'a grant from the leader');
    await lease.release({ status: 200, latencyMs: 3 });
    await eventually(
      async () => (await a.admin('GET', '/admin/limits')).body.limits[0]?.grantsInWindow === 1,
      'the grant counted at the leader',
    );
    await gone.admission.close();

    const stoppedAt = Date.now();
    await a.hub.close(); // a graceful stop releases the lease
    await eventually(
      async () => (await b.admin('GET', '/health', undefined, null)).body.role === 'leader',
      'the standby to take over',
      5000,
    );
    t.comment(`the standby led ${Date.now() - stoppedAt} ms after the leader stopped (renewMs ${FAILOVER.renewMs})`);
    t.match((await b.admin('GET', '/admin/limits')).body, {
      role: 'leader',
      leader: { id: await idOf(b), url: b.url.replace('http', 'ws') },
    });
    await eventually(
      () => both.admission.state === 'connected' && both.admission.connection.url === b.url.replace('http', 'ws'),
      'the instance to move to the new leader',
      10_000,
    );
    await eventually(() => admission.state === 'connected', 'the instance given only b to connect now');
    const [view] = (await b.admin('GET', '/admin/limits')).body.limits;
    t.match(
      view,
      { opcoId: 'op', occupied: 1 },
      "the old leader's grant still counts: the journal was loaded at takeover",
    );
    t.match((await b.admin('GET', '/metrics', undefined, null)).body, /opco_proxy_hub_leader 1/);
  },
);
