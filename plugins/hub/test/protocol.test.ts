// The protocol (protocol.ts) against broken and hostile peers, on both sides, over real sockets:
// neither side crashes, the bad message is answered or ignored, the good ones still work; a grant
// that comes after its ask was given up goes back as `unused`.
import t from 'tap';
import { once } from 'node:events';
import { WebSocket, WebSocketServer } from 'ws';
import { parseHubMessage, parseInstanceMessage, type InstanceMessage } from '../src/index.js';
import { admissionFor, eventually, request, startTestHub } from './fixtures/hub-harness.js';

t.test('parsers refuse what does not fit, with the field at fault', async (t) => {
  const hello = { type: 'hello', protocol: 1, instanceId: 'i-1', expectedInstances: 2, limits: { op: { limit: 60, windowMs: 60000 } }, usage: [], complete: true };
  t.ok(parseInstanceMessage(JSON.stringify(hello)).ok);
  const refused: Array<[unknown, RegExp]> = [
    ['not json', /not JSON/],
    [[], /no known type/],
    [null, /no known type/],
    [{ type: 'constructor' }, /no known type/],
    [{ type: 'ask' }, /ask: askId: is required/],
    [{ ...hello, protocol: 2 }, /protocol: must be one of 1/],
    [{ ...hello, extra: 1 }, /extra: is not allowed/],
    [JSON.parse('{"type":"cancel","askId":"a","__proto__":{"x":1}}'), /__proto__: is not allowed/],
    [{ ...hello, limits: { __proto__: null, constructor: { limit: 1, windowMs: 1 } } }, /limits: constructor: must be 1-64/],
    [{ ...hello, expectedInstances: 1e300 }, /expectedInstances: must be an integer/],
    [{ ...hello, usage: [{ id: 'x', opcoId: 'op', startedAgoMs: -1 }] }, /usage: \[0\]: startedAgoMs/],
    [{ type: 'done', grantId: 'g', outcome: 'maybe' }, /outcome: must be one of used, unused/],
    [{ type: 'metrics', windows: { op: { requests: 1, errors: 0, rateLimited: 0, averageLatencyMs: 'fast' } } }, /averageLatencyMs/],
    [{ type: 'ask', askId: 'a', opcoId: 'op', method: 'DELETE', route: 'r', priority: 5, tenant: 't', rateLimit: { limit: 1, windowMs: 1 } }, /method/],
  ];
  for (const [message, error] of refused) {
    const parsed = parseInstanceMessage(typeof message === 'string' ? message : JSON.stringify(message));
    t.equal(parsed.ok, false);
    if (!parsed.ok) t.match(parsed.error, error);
  }
  const ask = { type: 'ask', askId: 'a', opcoId: 'op', method: 'GET', route: 'r', priority: 5, tenant: 't', rateLimit: { limit: 1, windowMs: 1 } };
  t.ok(parseInstanceMessage(JSON.stringify(ask)).ok, 'an ask without `proven`: what an instance of the previous version sends');
  t.ok(parseInstanceMessage(JSON.stringify({ ...ask, proven: false })).ok);
  t.ok(parseInstanceMessage(JSON.stringify({ ...ask, proven: true })).ok);
  t.match(parseInstanceMessage(JSON.stringify({ ...ask, proven: 'no' })), { ok: false, error: 'ask: proven: must be a boolean' });
  t.notOk(parseHubMessage(JSON.stringify({ type: 'grant', askId: 'a', grantId: 'g', expiresInMs: 1 })).ok, 'a grant without its token');
  t.notOk(parseHubMessage(JSON.stringify({ type: 'hello' })).ok, 'an instance message from the hub');
});

t.test('a hostile instance gets errors back, then is closed; the hub and other instances carry on', async (t) => {
  const hub = await startTestHub({ opcos: { op: { limit: 5, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const { key } = await hub.key('pub');
  const ws = new WebSocket(`${hub.url.replace('http', 'ws')}/ws?apiKey=${key}`);
  await once(ws, 'open');
  const answers: any[] = [];
  ws.on('message', (data: Buffer) => answers.push(JSON.parse(String(data))));
  const send = (data: string | Buffer | object) => ws.send(typeof data === 'object' && !Buffer.isBuffer(data) ? JSON.stringify(data) : data);

  send({ type: 'ask', askId: 'a', opcoId: 'op', method: 'GET', route: 'r', priority: 5, tenant: 't', rateLimit: { limit: 5, windowMs: 60_000 } });
  await eventually(() => answers.length === 1, 'an answer');
  t.match(answers[0], { type: 'error', message: 'the first message must be hello' });
  send({ type: 'hello', protocol: 1, instanceId: 'bad-1', expectedInstances: 1, limits: {}, usage: [], complete: true });
  await eventually(() => answers.some((a) => a.type === 'welcome'), 'welcome');
  send({ type: 'hello', protocol: 1, instanceId: 'bad-1', expectedInstances: 1, limits: {}, usage: [], complete: true });
  send({ type: 'done', grantId: 'not-mine', outcome: 'unused' }); // valid shape, unknown grant: ignored
  send({ type: 'cancel', askId: 'never-asked' });
  send(Buffer.from([0xff, 0x00, 0xfe]));
  send('{"type":"ask","askId":"x","opcoId":"op","method":"GET","route":"r","priority":5,"tenant":"t","rateLimit":{"limit":1e400,"windowMs":1}}');
  await eventually(() => answers.filter((a) => a.type === 'error').length === 4, 'three more errors');
  t.match(answers.filter((a) => a.type === 'error').map((a) => a.message), ['the first message must be hello', 'hello was already received', 'message is not JSON', /rateLimit: limit/]);
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
    ws.on('message', (data: Buffer) => received.push(JSON.parse(String(data))));
  });
  const port = (server.address() as { port: number }).port;
  const logs: string[] = [];
  const { admission } = admissionFor(`ws://127.0.0.1:${port}`, 'hk_fake', { maxWaitMs: 100 }, logs);
  t.teardown(() => admission.close());
  await eventually(() => received.some((m) => m.type === 'hello'), 'hello');
  t.match(received[0], { type: 'hello', protocol: 1, instanceId: String, expectedInstances: 1, usage: [], complete: true });

  for (const junk of ['}{', '[]', '{"type":"grant"}', '{"type":"welcome","protocol":1,"instanceId":"x","tenantId":"y","heartbeatMs":-5}', Buffer.alloc(10)]) peer!.send(junk);
  peer!.send(JSON.stringify({ type: 'grant', askId: 'nobody-asked', grantId: 'g-stray', token: 't', expiresInMs: 30_000 }));
  await eventually(() => received.some((m) => m.type === 'done' && m.grantId === 'g-stray'), 'the stray grant to be returned');
  t.match(received.find((m) => m.type === 'done'), { grantId: 'g-stray', outcome: 'unused' });

  // A client GET gives up after maxWaitMs; the grant that comes afterwards goes back unused.
  const refused = admission.admit(request({ synchronous: true }));
  await t.rejects(refused, { code: 'RATE_LIMITED' });
  const ask = received.find((m) => m.type === 'ask');
  await eventually(() => received.some((m) => m.type === 'cancel' && ask?.type === 'ask' && m.askId === ask.askId), 'its ask to be cancelled');
  peer!.send(JSON.stringify({ type: 'grant', askId: ask?.type === 'ask' ? ask.askId : '', grantId: 'g-late', token: 'jwt', expiresInMs: 29_000 }));
  await eventually(() => received.some((m) => m.type === 'done' && m.grantId === 'g-late' && m.outcome === 'unused'), 'the late grant to be returned unused');

  // And a proper grant still works.
  const pending = admission.admit(request());
  await eventually(() => received.filter((m) => m.type === 'ask').length === 2, 'the second ask');
  const second = received.filter((m) => m.type === 'ask')[1];
  peer!.send(JSON.stringify({ type: 'grant', askId: second.type === 'ask' ? second.askId : '', grantId: 'g-ok', token: 'the-jwt', expiresInMs: 29_000 }));
  const lease = await pending;
  t.same(lease.headers, { 'Svc-Hub-Token': 'the-jwt' });
  await lease.release({ status: 429, latencyMs: 12 });
  await eventually(() => received.some((m) => m.type === 'done' && m.grantId === 'g-ok'), 'done');
  t.match(received.find((m) => m.type === 'done' && m.grantId === 'g-ok'), { outcome: 'used', status: 429, latencyMs: 12 });
  await eventually(() => received.some((m) => m.type === 'metrics' && m.windows.op?.rateLimited === 1), 'the 429 in a metrics report');
  t.ok(logs.some((line) => line.includes('hub message ignored')), 'garbage was logged and ignored');
  t.equal(admission.state, 'connected', 'still connected');
});
