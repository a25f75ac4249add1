// Signed delivery (delivery.ts; SPEC 6.2, 6.3, D23, D24, P10) to a real local receiver, on the embedded store and
// queue under a frozen TestClock: what a receiver gets and how it is signed, the 1 s / 5 s / 15 s schedule to
// `failed`, and the webhook states that stop or switch off delivery: the promises integrators build on.
import http from 'node:http';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { createEmbeddedQueue, createEmbeddedStore, createLogger } from '@opco-proxy/core';
import { RetryPolicy } from '@opco-proxy/core/durable';
import { createSealer } from '@opco-proxy/core/application';
import { type DomainEvent, type HostResolver } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { eventually } from '@opco-proxy/core/eventually';
import { Deliveries, type DeliveryRecord } from '../src/deliveries.js';
import { DELIVERY_QUEUE, DeliveryWorker } from '../src/delivery.js';
import { KnownWebhooks } from '../src/known-webhooks.js';
import { WebhookRecords, type WebhookRecord } from '../src/webhook-records.js';
import type { Mode } from '../src/ssrf.js';

const SECRET = 'a1'.repeat(32);
const NEW_SECRET = 'b2'.repeat(32);
const TENANT = 'cfa-a';
const DAY = 24 * 60 * 60 * 1000;

const hex = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');
/** Standard Webhooks: base64 HMAC of `id.timestamp.body` with the 32 bytes the hex secret spells. */
const v1 = (secret: string, id: string, seconds: number, body: string) =>
  `v1,${createHmac('sha256', Buffer.from(secret, 'hex')).update(`${id}.${seconds}.${body}`).digest('base64')}`;

interface Options {
  mode?: Mode;
  retries?: RetryPolicy;
  timeoutMs?: number;
  resolveHost?: HostResolver;
  /** The callback URL's scheme and host (the receiver listens on 127.0.0.1). */
  origin?: string;
}

async function setup(t: Test, options: Options = {}) {
  // The receiver: answers `answer.status`, or never when it is null.
  const answer: { status: number | null; headers?: Record<string, string> } = { status: 200 };
  const received: { headers: http.IncomingHttpHeaders; body: string; url?: string }[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body, url: req.url });
      if (answer.status !== null) res.writeHead(answer.status, answer.headers).end();
    });
  });
  server.on('connection', () => void connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const clock = new TestClock({ frozen: true });
  const store = await createEmbeddedStore({});
  const queue = createEmbeddedQueue({ clock });
  const deliveries = new Deliveries(store, clock, 'worker-a');
  const records = new WebhookRecords(store, createSealer(randomBytes(32)));
  const known = new KnownWebhooks(records, clock);
  // As the plugin wires them (index.ts): every change reaches the worker's copies and the deliveries.
  records.followChanges((id, revision) => {
    known.forget(id);
    return deliveries.follow(id, revision);
  });
  const outcomes: string[] = [];
  const emitted: unknown[] = [];
  const worker = new DeliveryWorker({
    deliveries,
    records,
    known,
    queue,
    clock,
    log: createLogger({ level: 'silent' }),
    mode: options.mode ?? 'development',
    attempts: { inc: ({ outcome }) => void outcomes.push(outcome) },
    resolveHost:
      options.resolveHost ??
      (async () => {
        throw new Error('no name is resolved in these tests');
      }),
    timeoutMs: options.timeoutMs ?? 5000,
    retries: options.retries ?? new RetryPolicy(4, [1000, 5000, 15000]),
    concurrency: 4,
    retentionMs: 30 * DAY,
    emit: async (event) => void emitted.push(event),
  });
  await worker.start();
  t.teardown(async () => {
    await worker.stop(clock.now());
    await queue.close();
    await store.close();
    server.closeAllConnections();
    server.close();
  });

  const origin = options.origin ?? 'http://127.0.0.1';
  const webhook = (id: string, events = ['job.completed']) =>
    records.create({
      _id: id,
      tenant: TENANT,
      callbackUrl: `${origin}:${port}/hook`,
      events,
      secret: SECRET,
      active: true,
      createdAt: clock.date(),
    });
  let n = 0;
  /** Records an event's delivery to `to` as the outbox does; `send` queues it too. */
  const record = async (to: WebhookRecord) => {
    const event: DomainEvent = {
      id: `ev-${++n}`,
      type: 'job.completed',
      tenant: TENANT,
      opcoId: 'sandbox',
      timestamp: clock.date().toISOString(),
      data: { jobId: `job-${n}`, status: 'completed' },
    };
    const current = (await records.get(to._id, TENANT)) ?? to;
    const [{ id }] = await deliveries.record(event, [{ webhookId: to._id, revision: current.revision ?? 0 }], 0);
    return { id, event, to: current };
  };
  const send = async (to: WebhookRecord) => {
    const recorded = await record(to);
    await worker.schedule(recorded.id, 0, recorded.to);
    return recorded;
  };
  /** The delivery once `done` holds of it and its lease is given back. */
  const until = (id: string, done: (d: DeliveryRecord) => boolean, what: string) =>
    eventually(async () => {
      const delivery = await deliveries.get(id);
      return delivery && delivery.leaseOwner === null && done(delivery) && delivery;
    }, what);
  const delayed = async () => (await queue.depth(DELIVERY_QUEUE)).delayed;
  return {
    clock,
    records,
    deliveries,
    worker,
    answer,
    received,
    port,
    outcomes,
    emitted,
    webhook,
    record,
    send,
    until,
    delayed,
    connections: () => connections,
  };
}

t.test("a 2xx answer delivers: the notification is the spec's body, signed as SPEC 6.2 and D23 say", async (t) => {
  const { clock, answer, received, outcomes, webhook, send, until } = await setup(t);
  answer.status = 204;
  const { id, event } = await send(await webhook('wh-1'));
  const done = await until(id, (d) => d.status === 'delivered', 'the delivery');

  t.equal(received.length, 1, 'one POST');
  const [{ headers, body, url }] = received;
  t.equal(url, '/hook');
  t.same(JSON.parse(body), { event: 'job.completed', opcoId: 'sandbox', timestamp: event.timestamp, data: event.data });
  t.equal(headers['content-type'], 'application/json');
  t.equal(headers['svc-event'], 'job.completed');
  t.equal(headers['svc-signature'], hex(SECRET, body), 'lowercase hex HMAC-SHA256 of the raw body with the secret');
  const expectedId = createHash('sha256').update(`${event.id}\nwh-1`).digest('hex').slice(0, 32);
  t.equal(id, expectedId);
  t.equal(headers['svc-delivery-id'], expectedId);
  t.equal(headers['svc-timestamp'], clock.date().toISOString(), 'when this attempt was sent');
  const seconds = Math.floor(clock.now() / 1000);
  t.equal(headers['webhook-id'], expectedId);
  t.equal(headers['webhook-timestamp'], String(seconds));
  t.equal(headers['webhook-signature'], v1(SECRET, expectedId, seconds, body));
  t.equal(headers['svc-signature-previous'], undefined, 'no previous secret, no second signature');

  t.match(done, { status: 'delivered', attempts: 1, statusCode: 204, error: null });
  t.same(done.deliveredAt, clock.date());
  t.same(done.expiresAt, new Date(clock.now() + 30 * DAY), 'kept for the retention');
  t.same(outcomes, ['delivered']);
});

t.test('a failing receiver is tried 4 times, after 1 s, 5 s and 15 s, then the delivery is failed', async (t) => {
  const { clock, records, answer, received, outcomes, webhook, send, until, delayed } = await setup(t);
  answer.status = 503;
  const start = clock.now();
  const { id } = await send(await webhook('wh-1'));
  let at = start;
  for (const [i, wait] of [1000, 5000, 15_000].entries()) {
    const d = await until(id, (r) => r.attempts === i + 1, `attempt ${i + 1}`);
    await eventually(async () => (await delayed()) === 1, `retry ${i + 1} queued`);
    t.match(d, { status: 'retrying', attempts: i + 1, statusCode: 503, error: 'receiver answered 503' });
    t.same(d.nextAttemptAt, new Date(at + wait), `attempt ${i + 2} due ${wait} ms later`);
    await clock.advance(wait - 1);
    t.equal(await delayed(), 1, 'not a moment early');
    await clock.advance(1);
    at += wait;
  }
  const failed = await until(id, (d) => d.status === 'failed', 'the failure');
  t.match(failed, { attempts: 4, statusCode: 503, error: 'receiver answered 503', deliveredAt: null });
  t.same(failed.expiresAt, new Date(at + 30 * DAY));
  t.equal(await delayed(), 0, 'no fifth attempt');
  t.equal(received.length, 4);
  t.same(
    received.map((r) => r.headers['svc-delivery-id']),
    [id, id, id, id],
    'the same delivery id on every attempt',
  );
  const sentAt = [0, 1000, 6000, 21_000].map((ms) => new Date(start + ms).toISOString());
  t.same(
    received.map((r) => r.headers['svc-timestamp']),
    sentAt,
    'each attempt signed with its own time',
  );
  t.same(outcomes, ['retrying', 'retrying', 'retrying', 'failed']);
  t.same((await records.get('wh-1', TENANT))?.failingSince, clock.date(), 'the failing streak starts');
});

t.test('a redirect is not followed: it is a failed attempt', async (t) => {
  const { answer, received, port, webhook, send, until } = await setup(t);
  answer.status = 302;
  answer.headers = { location: `http://127.0.0.1:${port}/elsewhere` };
  const { id } = await send(await webhook('wh-1'));
  const d = await until(id, (r) => r.attempts === 1, 'the attempt');
  t.match(d, { status: 'retrying', statusCode: 302, error: 'receiver answered 302' });
  t.same(
    received.map((r) => r.url),
    ['/hook'],
    'nothing sent to the location',
  );
});

t.test('a receiver that does not answer within the attempt time limit fails the attempt', async (t) => {
  const { clock, deliveries, answer, received, webhook, send, until } = await setup(t, { timeoutMs: 60_000 });
  answer.status = null;
  const { id } = await send(await webhook('wh-1'));
  await eventually(() => received.length === 1, 'the notification received');
  // The attempt's deadline is a timer of the worker's clock: a minute, not waited for.
  await clock.advance(59_999);
  t.equal((await deliveries.get(id))?.attempts ?? 0, 0, 'no failure before the deadline');
  await clock.advance(1);
  const d = await until(id, (r) => r.attempts === 1, 'the attempt');
  t.match(d, { status: 'retrying', statusCode: null, error: 'no answer within 60000 ms' });
});

t.test('a callback URL is checked again at every delivery: a refused target gets no connection (D24)', async (t) => {
  // A public name at registration, rebound since to the receiver's loopback address.
  const { clock, records, port, connections, webhook, send, until } = await setup(t, {
    mode: 'production',
    origin: 'https://hooks.example.com',
    resolveHost: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  const rebound = await send(await webhook('wh-1'));
  const d = await until(rebound.id, (r) => r.attempts === 1, 'the attempt');
  t.match(d, { status: 'retrying', statusCode: null });
  t.match(d.error, /^refused target: callbackUrl: host hooks\.example\.com resolves to 127\.0\.0\.1, .*loopback/);
  // A loopback address itself (say, a record written before the rules it breaks): refused before any lookup.
  const literal = await records.create({
    _id: 'wh-2',
    tenant: TENANT,
    callbackUrl: `https://127.0.0.1:${port}/hook`,
    events: ['job.completed'],
    secret: SECRET,
    active: true,
    createdAt: clock.date(),
  });
  const refused = await until((await send(literal)).id, (r) => r.attempts === 1, 'the attempt to an address');
  t.equal(refused.error, 'refused target: callbackUrl: target 127.0.0.1 is a loopback address');
  t.equal(connections(), 0, 'no connection was made to the address');
});

t.test('a webhook switched off or deleted after its event gets nothing: the delivery ends failed', async (t) => {
  const { records, worker, received, outcomes, webhook, record, send, until } = await setup(t);
  const off = await webhook('wh-off');
  const gone = await webhook('wh-gone');
  // A first delivery makes the worker keep a copy of the webhook.
  await until((await send(off)).id, (d) => d.status === 'delivered', 'the first delivery');
  const pending = [await record(off), await record(gone)];
  await records.update('wh-off', TENANT, { active: false });
  await records.remove('wh-gone', TENANT);
  // Recorded before the changes, attempted after: the change holds.
  for (const { id, to } of pending) await worker.schedule(id, 0, to);
  const ended = pending.map(({ id }) => until(id, (d) => d.status === 'failed', id));
  const [deactivated, deleted] = await Promise.all(ended);
  t.match(deactivated, { attempts: 0, error: 'webhook deactivated', statusCode: null });
  t.match(deleted, { attempts: 0, error: 'webhook deleted', statusCode: null });
  t.ok(deleted.expiresAt instanceof Date, 'kept for the retention like any finished delivery');
  t.equal(received.length, 1, 'only the first delivery was sent');
  t.same(outcomes, ['delivered']);
});

t.test('for 24 h after a rotation both secrets sign; then the new one alone (P10)', async (t) => {
  const { clock, records, received, webhook, send, until } = await setup(t);
  await webhook('wh-1');
  const rotated = await records.rotate('wh-1', TENANT, NEW_SECRET, clock.date());
  const first = await send(rotated!);
  await until(first.id, (d) => d.status === 'delivered', 'the delivery after the rotation');
  const seconds = Math.floor(clock.now() / 1000);
  const { headers, body } = received[0];
  t.equal(headers['svc-signature'], hex(NEW_SECRET, body), 'Svc-Signature: the new secret');
  t.equal(headers['svc-signature-previous'], hex(SECRET, body), 'Svc-Signature-Previous: the old one');
  const both = `${v1(NEW_SECRET, first.id, seconds, body)} ${v1(SECRET, first.id, seconds, body)}`;
  t.equal(headers['webhook-signature'], both, 'webhook-signature: both, the new one first');

  await clock.advance(DAY);
  const later = await send(rotated!);
  await until(later.id, (d) => d.status === 'delivered', 'the delivery 24 h later');
  const last = received[1];
  t.equal(last.headers['svc-signature'], hex(NEW_SECRET, last.body));
  t.equal(last.headers['svc-signature-previous'], undefined, 'the old secret signs no more');
  t.equal(last.headers['webhook-signature'], v1(NEW_SECRET, later.id, Math.floor(clock.now() / 1000), last.body));
});

t.test('5 days of failed deliveries switch the webhook off and announce it; a delivered one resets', async (t) => {
  // One attempt per delivery: each failing receiver answer ends its delivery at once.
  const { clock, records, answer, emitted, webhook, send, until } = await setup(t, { retries: new RetryPolicy(1, []) });
  const current = async () => (await records.get('wh-1', TENANT))!;
  const deliver = async (status: number) => {
    answer.status = status;
    const { id } = await send(await current());
    await until(id, (d) => d.status !== 'pending' && d.status !== 'retrying', `a delivery answered ${status}`);
  };
  await webhook('wh-1');
  await deliver(500);
  t.same((await current()).failingSince, clock.date(), 'a first failure starts the streak');
  await clock.advance(4 * DAY);
  await deliver(200);
  t.equal((await current()).failingSince, null, 'a delivered one ends it');
  await clock.advance(DAY);
  const streak = clock.date();
  await deliver(500);
  await clock.advance(5 * DAY - 1);
  await deliver(500);
  t.match(await current(), { active: true, failingSince: streak }, 'a moment short of 5 days');
  t.same(emitted, []);

  await clock.advance(1);
  await deliver(500);
  const off = await current();
  t.match(off, { active: false, disabledReason: `every delivery failed since ${streak.toISOString()}` });
  t.same(off.disabledAt, clock.date());
  t.same(
    emitted,
    [
      {
        id: `wh-1:disabled:${clock.now()}`,
        type: 'webhook.disabled',
        tenant: TENANT,
        opcoId: '',
        data: {
          webhookId: 'wh-1',
          callbackUrl: off.callbackUrl,
          disabledAt: clock.date().toISOString(),
          reason: off.disabledReason,
        },
      },
    ],
    'the tenant is told once',
  );
});
