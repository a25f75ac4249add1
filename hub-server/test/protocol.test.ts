// The protocol (plugins/hub's protocol.ts) against broken and hostile peers, on both sides, over real sockets:
// neither side crashes, the bad message is answered or ignored, the good ones still work; a grant
// that comes after its ask was given up goes back as `unused`.
import t from 'tap';
import { once } from 'node:events';
import { WebSocket, WebSocketServer } from 'ws';
import type { InstanceMessage } from '@opco-proxy/plugin-hub';
import { admissionFor, eventually, request, startTestHub } from './fixtures/hub-harness.js';

t.test('a hostile instance gets errors back, then is closed; the hub and other instances carry on', async (t) => {
  const hub = await startTestHub({ opcos: { op: { limit: 5, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const { key } = await hub.key('pub');
  const ws = new WebSocket(`${hub.url.replace('http', 'ws')}/ws?apiKey=${key}`);
  await once(ws, 'open');
  const answers: any[] = [];
  ws.on('message', (data) => answers.push(JSON.parse((data as Buffer).toString())));
  const send = (data: string | Buffer | object) =>
    ws.send(typeof data === 'object' && !Buffer.isBuffer(data) ? JSON.stringify(data) : data);

  send({
    type: 'ask',
    askId: 'a',
    opcoId: 'op',
    method: 'GET',
    route: 'r',
    priority: 5,
    tenant: 't',
    rateLimit: { limit: 5, windowMs: 60_000 },
  });
  await eventually(() => answers.length === 1, 'an answer');
  t.match(answers[0], { type: 'error', message: 'the first message must be hello' });
  send({
    type: 'hello',
    protocol: 1,
    instanceId: 'bad-1',
    expectedInstances: 1,
    limits: {},
    usage: [],
    complete: true,
  });
  await eventually(() => answers.some((a) => a.type === 'welcome'), 'welcome');
  send({
    type: 'hello',
    protocol: 1,
    instanceId: 'bad-1',
    expectedInstances: 1,
    limits: {},
    usage: [],
    complete: true,
  });
  send({ type: 'done', grantId: 'not-mine', outcome: 'unused' }); // valid shape, unknown grant: ignored
  send({ type: 'cancel', askId: 'never-asked' });
  send(Buffer.from([0xff, 0x00, 0xfe]));
  send(
    '{"type":"ask","askId":"x","opcoId":"op","method":"GET","route":"r","priority":5,"tenant":"t","rateLimit":{"limit":1e400,"windowMs":1}}',
  );
  await eventually(() => answers.filter((a) => a.type === 'error').length === 4, 'three more errors');
  t.match(
    answers.filter((a) => a.type === 'error').map((a) => a.message),
    [
      'the first message must be hello',
      'hello was already received',
      'message is not JSON',
      'ask: rateLimit.limit: Expected integer',
    ],
  );
  t.equal((await hub.admin('GET', '/health', undefined, null)).status, 200, 'the hub still answers');

  const closed = once(ws, 'close');
  for (let i = 0; i < 30; i++) send('garbage');
  const [code] = await closed;
  t.equal(code, 1008, 'closed after too many invalid messages');

  const { admission } = admissionFor(hub.url, key);
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'a well-behaved instance');
  t.not((await admission.admit(request())).headers['Svc-Hub-Token'], 'DISCONNECTED');
});

t.test('against a hostile hub, the instance ignores garbage and returns grants it no longer wants', async (t) => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const received: InstanceMessage[] = [];
  let peer: WebSocket | undefined;
  server.on('connection', (ws) => {
    peer = ws;
    ws.on('message', (data) => received.push(JSON.parse((data as Buffer).toString())));
  });
  const port = (server.address() as { port: number }).port;
  const logs: string[] = [];
  const { admission } = admissionFor(`ws://127.0.0.1:${port}`, 'hk_fake', { maxWaitMs: 100 }, logs);
  t.teardown(() => admission.close());
  await eventually(() => received.some((m) => m.type === 'hello'), 'hello');
  t.match(received[0], {
    type: 'hello',
    protocol: 1,
    instanceId: String,
    expectedInstances: 1,
    usage: [],
    complete: true,
  });

  for (const junk of [
    '}{',
    '[]',
    '{"type":"grant"}',
    '{"type":"welcome","protocol":1,"instanceId":"x","fleetId":"y","heartbeatMs":-5}',
    Buffer.alloc(10),
  ])
    peer!.send(junk);
  peer!.send(
    JSON.stringify({ type: 'grant', askId: 'nobody-asked', grantId: 'g-stray', token: 't', expiresInMs: 30_000 }),
  );
  await eventually(
    () => received.some((m) => m.type === 'done' && m.grantId === 'g-stray'),
    'the stray grant to be returned',
  );
  t.match(
    received.find((m) => m.type === 'done'),
    { grantId: 'g-stray', outcome: 'unused' },
  );

  // A client GET gives up after maxWaitMs; the grant that comes afterwards goes back unused.
  const refused = admission.admit(request({ synchronous: true }));
  await t.rejects(refused, { code: 'RATE_LIMITED' });
  const ask = received.find((m) => m.type === 'ask');
  await eventually(
    () => received.some((m) => m.type === 'cancel' && ask?.type === 'ask' && m.askId === ask.askId),
    'its ask to be cancelled',
  );
  peer!.send(
    JSON.stringify({
      type: 'grant',
      askId: ask?.type === 'ask' ? ask.askId : '',
      grantId: 'g-late',
      token: 'jwt',
      expiresInMs: 29_000,
    }),
  );
  await eventually(
    () => received.some((m) => m.type === 'done' && m.grantId === 'g-late' && m.outcome === 'unused'),
    'the late grant to be returned unused',
  );

  // And a proper grant still works.
  const pending = admission.admit(request());
  await eventually(() => received.filter((m) => m.type === 'ask').length === 2, 'the second ask');
  const second = received.filter((m) => m.type === 'ask')[1];
  peer!.send(
    JSON.stringify({
      type: 'grant',
      askId: second.type === 'ask' ? second.askId : '',
      grantId: 'g-ok',
      token: 'the-jwt',
      expiresInMs: 29_000,
    }),
  );
  const lease = await pending;
  t.same(lease.headers, { 'Svc-Hub-Token': 'the-jwt' });
  await lease.release({ status: 429, latencyMs: 12 });
  await eventually(() => received.some((m) => m.type === 'done' && m.grantId === 'g-ok'), 'done');
  t.match(
    received.find((m) => m.type === 'done' && m.grantId === 'g-ok'),
    { outcome: 'used', status: 429, latencyMs: 12 },
  );
  await eventually(
    () => received.some((m) => m.type === 'metrics' && m.windows.op?.rateLimited === 1),
    'the 429 in a metrics report',
  );
  t.ok(
    logs.some((line) => line.includes('hub message ignored')),
    'garbage was logged and ignored',
  );
  t.equal(admission.state, 'connected', 'still connected');
});

// Protocol 2 renamed the welcome's tenantId to fleetId; instances and hubs of the previous version
// (protocol 1, which refuses unknown fields) must keep working with this one, both ways.
const OLD_HELLO = {
  type: 'hello',
  protocol: 1,
  instanceId: 'old-1',
  expectedInstances: 1,
  limits: {},
  usage: [],
  complete: true,
};

t.test(
  'an instance of the previous version: its hello is taken and its welcome says tenantId, as it reads it',
  async (t) => {
    const hub = await startTestHub({ opcos: { op: { limit: 5, windowMs: 60_000 } } });
    t.teardown(() => hub.close());
    const { key } = await hub.key('publisher-a');
    const answers: any[] = [];
    const open = async (query: string) => {
      const ws = new WebSocket(`${hub.url.replace('http', 'ws')}/ws?apiKey=${key}${query}`);
      t.teardown(() => ws.close());
      ws.on('message', (data) => answers.push(JSON.parse((data as Buffer).toString())));
      await once(ws, 'open');
      return ws;
    };
    const old = await open(''); // the previous version's URL: no protocol parameter
    old.send(JSON.stringify(OLD_HELLO));
    await eventually(() => answers.find((a) => a.type === 'welcome'), 'the welcome');
    // Exactly the fields the previous version's parser allows, protocol 1 included.
    t.same(answers[0], {
      type: 'welcome',
      protocol: 1,
      instanceId: 'old-1',
      tenantId: 'publisher-a',
      heartbeatMs: 10_000,
    });
    old.send(
      JSON.stringify({
        type: 'ask',
        askId: 'a1',
        opcoId: 'op',
        method: 'GET',
        route: 'r',
        priority: 5,
        tenant: 'cfa',
        rateLimit: { limit: 5, windowMs: 60_000 },
      }),
    );
    await eventually(() => answers.find((a) => a.type === 'grant'), 'a grant for the old ask');
    t.match(answers[1], { type: 'grant', askId: 'a1', grantId: String, token: String });
    t.match((await hub.admin('GET', '/admin/instances')).body, [{ instanceId: 'old-1', fleetId: 'publisher-a' }]);

    answers.length = 0;
    const fresh = await open('&protocol=2');
    fresh.send(JSON.stringify({ ...OLD_HELLO, instanceId: 'new-1' }));
    await eventually(() => answers.find((a) => a.type === 'welcome'), 'the welcome');
    t.same(
      answers[0],
      { type: 'welcome', protocol: 2, instanceId: 'new-1', fleetId: 'publisher-a', heartbeatMs: 10_000 },
      'one that asks for 2 gets fleetId',
    );
  },
);

t.test(
  'a hub of the previous version: the instance says the hello it takes, reads its welcome and gets grants',
  async (t) => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const received: any[] = [];
    let url = '';
    server.on('connection', (ws, req) => {
      url = req.url ?? '';
      ws.on('message', (data) => {
        const message = JSON.parse((data as Buffer).toString());
        received.push(message);
        // What a protocol-1 hub answers: tenantId, protocol 1.
        if (message.type === 'hello')
          ws.send(
            JSON.stringify({
              type: 'welcome',
              protocol: 1,
              instanceId: message.instanceId,
              tenantId: 'publisher-a',
              heartbeatMs: 10_000,
            }),
          );
        if (message.type === 'ask')
          ws.send(
            JSON.stringify({
              type: 'grant',
              askId: message.askId,
              grantId: 'g-1',
              token: 'old-hub-jwt',
              expiresInMs: 29_000,
            }),
          );
      });
    });
    const logs: string[] = [];
    const { admission } = admissionFor(
      `ws://127.0.0.1:${(server.address() as { port: number }).port}`,
      'hk_old',
      {},
      logs,
    );
    t.teardown(() => admission.close());
    await eventually(() => logs.some((line) => line.includes('connected to the hub')), 'the welcome to be read');
    const hello = received[0];
    t.same(
      Object.keys(hello).sort(),
      Object.keys(OLD_HELLO).sort(),
      'the hello has the fields of protocol 1, and no other',
    );
    t.equal(hello.protocol, 1, 'and says 1, the only version the old hub takes');
    t.match(url, /[?&]protocol=2(&|$)/, 'the version it can read is asked for in the URL, which the old hub ignores');
    t.match(JSON.parse(logs.find((line) => line.includes('connected to the hub'))!), {
      fleetId: 'publisher-a',
      protocol: 1,
    });
    t.notOk(
      logs.some((line) => line.includes('hub message ignored')),
      'the old welcome was not refused',
    );
    const lease = await admission.admit(request({ synchronous: true }));
    t.same(lease.headers, { 'Svc-Hub-Token': 'old-hub-jwt' });
    await lease.release({ status: 200, latencyMs: 3 });
  },
);
