import t, { type Test } from 'tap';
import { CLOSE_TIMEOUT_MS } from '../src/broker-connection.js';
import { createQueue, type QueueLogger } from '../src/index.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';
import { startRelay, type Relay } from './fixtures/tcp-relay.js';

/**
 * The connection to the broker drops (restart, network cut): a TCP relay between the queue and
 * the broker plays it by destroying every relayed socket. Consumers must resume by themselves,
 * nothing published and confirmed may be lost, and publish must never hang.
 */
const url = brokerUrl(t, 'RabbitMQ reconnection');
const PUBLISH_TIMEOUT_MS = 2000;
/**
 * Wall-clock slack on top of a time limit the plugin enforces with a timer: on a loaded machine
 * (the whole suite runs ~50 test files in parallel on 2 cores) a timer can fire late and the test
 * sees its outcome later still. What these bounds tell apart is "bounded by the plugin's timer"
 * from "hangs": a hang lasts until heartbeats notice (2 x 10 s) or forever, far past this slack.
 */
const SCHEDULING_SLACK_MS = 2000;

if (url) {
  const setUp = async (t: Test) => {
    const scratch = new ScratchQueues(url);
    const relay: Relay = await startRelay(url);
    const logged: string[] = [];
    const log = (level: string) => (data: object, message: string) =>
      logged.push(`${level} ${message} ${JSON.stringify(data)}`);
    const logger: QueueLogger = { info: log('info'), warn: log('warn'), error: log('error') };
    const queue = scratch.track(
      await createQueue({
        url: relay.url,
        publishTimeoutMs: PUBLISH_TIMEOUT_MS,
        reconnect: { initialDelayMs: 100, maxDelayMs: 400 },
        logger,
      }),
    );
    t.teardown(async () => {
      await queue.close();
      await relay.close();
      await scratch.deleteAll();
    });
    /** Waits for a log line: the client's own account of what it noticed, not a guess at how long it takes. */
    const logSays = (pattern: RegExp, what: string, timeoutMs = 10_000) =>
      eventually(() => logged.some((line) => pattern.test(line)), what, timeoutMs);
    return { scratch, relay, queue, logged, logSays };
  };

  /** Settles within the publish time limit (plus scheduling slack) one way or the other: never hangs. */
  const publishBounded = async (t: Test, publish: Promise<void>, what: string): Promise<'ok' | Error> => {
    const started = Date.now();
    const outcome = await publish.then(
      () => 'ok' as const,
      (err: unknown) => err as Error,
    );
    const took = Date.now() - started;
    t.ok(
      took < PUBLISH_TIMEOUT_MS + SCHEDULING_SLACK_MS,
      `${what}: settled in ${took} ms (${outcome === 'ok' ? 'confirmed' : outcome.message})`,
    );
    return outcome;
  };

  t.test('consumers resume after the connection drops mid-stream, and nothing confirmed is lost', async (t) => {
    const { scratch, relay, queue, logged, logSays } = await setUp(t);
    const name = scratch.name('resume');
    const seen: { id: string; redelivered: boolean }[] = [];
    await queue.consume<{ id: string }>(
      name,
      async (message) => {
        seen.push({ id: message.body.id, redelivered: message.redelivered });
        await sleep(30);
      },
      { prefetch: 1 },
    );
    const sent = Array.from({ length: 30 }, (_, i) => `m${i}`);
    for (const id of sent) await queue.publish(name, { id });
    await eventually(() => seen.length >= 3, 'the consumer is busy', 5000);
    t.ok(relay.connections >= 2, 'publishing and consuming connections go through the relay');
    relay.cut();

    // Sent before the client noticed the cut ('channel closed'): it is sent again on the next
    // connection, or rejects at the time limit; it never hangs.
    const during = await publishBounded(t, queue.publish(name, { id: 'during' }), 'a publish right after the cut');
    if (during === 'ok') sent.push('during');
    // Sent once the client knows: it waits for the reconnection and is confirmed.
    await logSays(/lost the connection.*"publishing"/, 'the publishing side noticed');
    const waiting = await publishBounded(
      t,
      queue.publish(name, { id: 'reconnecting' }),
      'a publish while reconnecting',
    );
    t.equal(waiting, 'ok', 'confirmed after the reconnection');
    sent.push('reconnecting');

    await eventually(
      () => sent.every((id) => seen.some((s) => s.id === id)),
      'every confirmed message is consumed',
      20_000,
    );
    t.pass('every confirmed message arrived after the reconnection');
    await queue.publish(name, { id: 'after' });
    await eventually(() => seen.some((s) => s.id === 'after'), 'a message published after the reconnection', 10_000);
    const duplicates = seen.length - new Set(seen.map((s) => s.id)).size;
    t.ok(duplicates <= 1, `at most the message in flight at the cut comes twice (${duplicates})`);
    for (const [index, arrival] of seen.entries()) {
      if (seen.findIndex((s) => s.id === arrival.id) < index)
        t.ok(arrival.redelivered, `${arrival.id} came again, marked redelivered`);
    }
    t.ok(
      logged.some((line) => /reconnected to RabbitMQ/.test(line)),
      'the reconnection is logged',
    );
    await queue.ping();
  });

  t.test(
    'while the broker stays unreachable, publish rejects within publishTimeoutMs; it works again after',
    async (t) => {
      const { scratch, relay, queue, logSays } = await setUp(t);
      const name = scratch.name('outage');
      await queue.publish(name, { id: 'before' });
      relay.refuse(true);
      relay.cut();
      // Once the client has noticed (a fixed sleep raced that on a loaded machine: a publish on the
      // not-yet-noticed dead connection fails at once with 'channel closed', which is another test),
      // and its reconnection attempts are refused.
      await logSays(/lost the connection.*"publishing"/, 'the publishing side noticed');
      await logSays(/reconnection failed.*"publishing"/, 'a reconnection attempt was refused');
      const started = Date.now();
      const outcome = await publishBounded(t, queue.publish(name, { id: 'during' }), 'a publish during the outage');
      t.match(outcome, { message: /unreachable/ }, 'it rejects: the broker is unreachable');
      t.ok(Date.now() - started >= PUBLISH_TIMEOUT_MS * 0.8, 'after waiting for a reconnection up to publishTimeoutMs');
      await t.rejects(queue.ping(), 'ping rejects during the outage');
      relay.refuse(false);
      await logSays(/reconnected to RabbitMQ.*"publishing"/, 'the queue reconnects');
      await queue.publish(name, { id: 'after' });
      const seen: string[] = [];
      await queue.consume<{ id: string }>(name, async (message) => {
        seen.push(message.body.id);
      });
      await eventually(() => seen.length >= 2, 'both confirmed messages arrive', 10_000);
      t.strictSame(
        seen.filter((id) => id !== 'during'),
        ['before', 'after'],
      );
      await queue.ping();
    },
  );

  t.test('a consumer whose broker stays away for a while subscribes again once it is back', async (t) => {
    const { scratch, relay, queue, logSays } = await setUp(t);
    const name = scratch.name('waiting');
    const seen: string[] = [];
    await queue.consume<{ id: string }>(name, async (message) => {
      seen.push(message.body.id);
    });
    relay.refuse(true);
    relay.cut();
    await sleep(500);
    relay.refuse(false);
    await logSays(/reconnected to RabbitMQ.*"publishing"/, 'the publishing side is back');
    // Published to the durable queue whether or not the consumer is back yet: it must come back
    // by itself (no new consume()) and get it.
    await queue.publish(name, { id: 'x' });
    await eventually(() => seen.length === 1, 'the consumer got it', 10_000);
    t.strictSame(seen, ['x']);
  });

  t.test('close during an outage does not hang', async (t) => {
    const { relay, queue, scratch } = await setUp(t);
    await queue.consume(scratch.name('closing'), async () => undefined);
    relay.refuse(true);
    relay.cut();
    const started = Date.now();
    await queue.close();
    // The cut is not noticed yet: close waits CLOSE_TIMEOUT_MS for close-ok, then drops the socket
    // (about CLOSE_TIMEOUT_MS in all). Each step of close is bounded by CLOSE_TIMEOUT_MS and at
    // most three run one after the other (the consumer's basic.cancel, its channel's close, then
    // both connections' close at once): a hang would last until heartbeats notice (20 s) or forever.
    const took = Date.now() - started;
    t.ok(took < 3 * CLOSE_TIMEOUT_MS + SCHEDULING_SLACK_MS, `closed in ${took} ms`);
    await t.rejects(queue.publish('anything', {}), /closed/);
  });
}
