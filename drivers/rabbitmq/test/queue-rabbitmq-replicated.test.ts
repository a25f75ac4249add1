import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { isKernelError, type Consumer } from '@opco-proxy/core';
import { queueContract } from '@opco-proxy/core/queue-contract';
import { createQueue } from '../src/index.js';
import type { RabbitConsumer } from '../src/rabbit-consumer.js';
import { PRIORITY_LEVELS, quorumDelayQueueOptions, quorumWorkQueueOptions } from '../src/topology.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';

/**
 * `replicated: true` (P17) on the machine's broker: one node is enough to declare quorum queues,
 * so this proves the topology, the delays and the priority order; the cluster test
 * (queue-rabbitmq-cluster.test.ts) proves what replication is for.
 */
const url = brokerUrl(t, 'replicated RabbitMQ queues');

if (url) {
  t.test('the queue contract on replicated queues', async (t) => {
    const scratch = new ScratchQueues(url, '', true);
    queueContract(t, async () => scratch.track(await createQueue({ url, replicated: true })), {
      cleanup: (name) => scratch.delete(name),
      priorityLevels: PRIORITY_LEVELS,
    });
  });

  const setUp = async (t: Test) => {
    const scratch = new ScratchQueues(url, '', true);
    const queue = scratch.track(await createQueue({ url, replicated: true }));
    const connection = await amqp.connect(url);
    const channel = await connection.createChannel();
    t.teardown(async () => {
      await queue.close();
      await connection.close();
      await scratch.deleteAll();
    });
    /** A declaration (or a check that it exists) on a channel of its own: a refused one closes it. */
    const declares = async (name: string, options: amqp.Options.AssertQueue | 'check') => {
      const probe = await connection.createChannel();
      probe.on('error', () => undefined);
      try {
        await (options === 'check' ? probe.checkQueue(name) : probe.assertQueue(name, options));
        return true;
      } catch {
        return false;
      } finally {
        await probe.close().catch(() => undefined);
      }
    };
    return { scratch, queue, channel, declares };
  };

  t.test(
    'a work queue is three quorum queues <queue>.p1/.p5/.p10; a priority waits with its level or the next',
    async (t) => {
      const { scratch, queue, channel, declares } = await setUp(t);
      const name = scratch.name('levels');
      const published: [string, number][] = [
        ['client', 1],
        ['three', 3],
        ['default', 5],
        ['seven', 7],
        ['sync', 10],
      ];
      for (const [id, priority] of published) await queue.publish(name, { id }, { priority });
      const held: Record<string, string[]> = {};
      for (const level of PRIORITY_LEVELS) {
        // Declaring again with exactly these arguments succeeds only if that is how it was made;
        // the broker checks the queue type (a classic declaration of it is refused).
        t.ok(await declares(`${name}.p${level}`, quorumWorkQueueOptions()), `${name}.p${level} is a quorum queue`);
        t.notOk(await declares(`${name}.p${level}`, { durable: true }), 'not a classic one');
        held[level] = [];
        for (
          let message = await channel.get(`${name}.p${level}`, { noAck: true });
          message;
          message = await channel.get(`${name}.p${level}`, { noAck: true })
        ) {
          held[level].push(`${JSON.parse(message.content.toString()).id}:${message.properties.priority}`);
        }
      }
      t.strictSame(
        held,
        { 1: ['client:10'], 5: ['three:8', 'default:6'], 10: ['seven:4', 'sync:1'] },
        'each at its level, its AMQP priority kept',
      );
      t.notOk(await declares(name, 'check'), 'no queue of the bare name: a classic one of that name never clashes');
    },
  );

  t.test('delays go through quorum delay queues that dead-letter at least once, with reject-publish', async (t) => {
    const { scratch, queue, channel, declares } = await setUp(t);
    const name = scratch.name('delays');
    await queue.publish(name, { id: 'later' }, { delayMs: 60_000, priority: 10 });
    await queue.publish(name, { id: 'soon' }, { delayMs: 250, priority: 1 });
    t.ok(
      await declares(`${name}.p10.delay.60000`, quorumDelayQueueOptions(`${name}.p10`, 60_000)),
      'the long delay has its quorum delay queue at its level',
    );
    t.strictSame(quorumDelayQueueOptions(`${name}.p10`, 60_000).arguments, {
      'x-queue-type': 'quorum',
      'x-message-ttl': 60_000,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': `${name}.p10`,
      'x-expires': 60_000 + 10 * 60_000,
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    });
    // The broker compares these arguments: the queue was made with at-least-once and reject-publish.
    const options = quorumDelayQueueOptions(`${name}.p10`, 60_000);
    t.notOk(
      await declares(`${name}.p10.delay.60000`, {
        ...options,
        arguments: { ...options.arguments, 'x-dead-letter-strategy': 'at-most-once' },
      }),
      'not at-most-once',
    );
    t.notOk(
      await declares(`${name}.p10.delay.60000`, {
        ...options,
        arguments: { ...options.arguments, 'x-overflow': 'drop-head' },
      }),
      'not drop-head',
    );
    t.equal((await channel.checkQueue(`${name}.p10.delay.60000`)).messageCount, 1, 'the long delay waits');
    // Message TTL on a quorum queue (RabbitMQ 3.10 and later): the short one comes back by itself.
    let arrived: amqp.GetMessage | false = false;
    const deadline = Date.now() + 5000;
    while (!arrived && Date.now() < deadline) {
      arrived = await channel.get(`${name}.p1`, { noAck: true });
      if (!arrived) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.ok(arrived, 'the short delay came back to <queue>.p1');
    if (arrived) {
      t.strictSame(JSON.parse(arrived.content.toString()), { id: 'soon' });
      t.equal(arrived.properties.priority, 10, 'with its priority');
      t.equal(arrived.properties.headers?.['x-first-death-reason'], 'expired', 'dead-lettered on expiry');
    }
  });

  t.test(
    'a rejected message goes through the quorum delay queue of its level and comes back to the handler',
    async (t) => {
      const { scratch, queue } = await setUp(t);
      const name = scratch.name('reject');
      const seen: string[] = [];
      const consumer = await queue.consume<{ id: string }>(
        name,
        async (message) => {
          seen.push(`${message.body.id}:${message.priority}:${message.redelivered}`);
          if (seen.length === 1) throw new Error('upstream answered 503');
        },
        { redeliveryDelayMs: 100 },
      );
      t.teardown(() => consumer.cancel());
      await queue.publish(name, { id: 'x' }, { priority: 5 });
      await eventually(() => seen.length === 2, 'the redelivery', 10_000);
      t.strictSame(seen, ['x:5:false', 'x:5:true']);
    },
  );

  /**
   * The handler is held busy by a first message; then 5 bulk messages and 1 client message are
   * published. However the levels' credit stands, the client message must be the next handled.
   */
  const busyThenUrgent = async (t: Test, blockerPriority: number) => {
    const { scratch, queue } = await setUp(t);
    const name = scratch.name(`order${blockerPriority}`);
    const handled: string[] = [];
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const consumer: Consumer = await queue.consume<{ id: string }>(
      name,
      async (message) => {
        handled.push(message.body.id);
        if (message.body.id === 'blocker') await blocked;
      },
      { prefetch: 1 },
    );
    t.teardown(() => {
      release(); // a failed assertion must not leave the handler (and the cancel waiting for it) hanging
      return consumer.cancel();
    });
    await queue.publish(name, { id: 'blocker' }, { priority: blockerPriority });
    await eventually(() => handled.length === 1, 'the handler is busy', 5000);
    for (let i = 0; i < 5; i++) await queue.publish(name, { id: `low${i}` }, { priority: 10 });
    await queue.publish(name, { id: 'high' }, { priority: 1 });
    // The urgent message has reached this worker (the broker sent it: a level's handlers never
    // use all its credit), so the order below is the consumer's choice, not a race with the broker.
    const waiting = consumer as unknown as RabbitConsumer;
    await eventually(
      () => waiting.waitingMessages >= 1 + (blockerPriority === 1 ? 1 : 0),
      'the messages the broker sends arrive',
      5000,
    );
    release();
    await eventually(() => handled.length === 7, 'every message is handled', 10_000);
    t.strictSame(
      handled,
      ['blocker', 'high', 'low0', 'low1', 'low2', 'low3', 'low4'],
      'the client message first, then the bulk ones in order',
    );
  };

  t.test('with the handler busy on a bulk message, a client message published after 5 bulk ones is handled next', (t) =>
    busyThenUrgent(t, 10),
  );
  t.test(
    'with the handler busy on a client message, a client message published after 5 bulk ones is handled next',
    (t) => busyThenUrgent(t, 1),
  );

  t.test(
    'a classic queue where a level queue goes is refused with a coded error naming it, not an amqplib stack',
    async (t) => {
      const { scratch, queue, channel } = await setUp(t);
      const name = scratch.name('clash');
      await channel.assertQueue(`${name}.p5`, { durable: true, arguments: { 'x-max-priority': 10 } });
      const refused = await queue
        .consume(name, async () => undefined)
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      t.ok(
        isKernelError(refused, 'OPCO_ERR_QUEUE_DECLARATION_REFUSED'),
        'consume (a worker starting) refuses with OPCO_ERR_QUEUE_DECLARATION_REFUSED',
      );
      t.match(
        (refused as Error).message,
        new RegExp(`queue ${name.replace(/\./g, '\\.')}\\.p5: PRECONDITION_FAILED - inequivalent arg`),
        'naming the queue and the argument',
      );
      await t.rejects(
        queue.publish(name, { id: 'x' }),
        /refused to declare queue .*\.p5/,
        'publish at that level refuses too',
      );
      await queue.publish(name, { id: 'y' }, { priority: 1 });
      t.pass('other levels are unaffected');
    },
  );

  t.test('depth counts the messages of every level and their delay queues', async (t) => {
    const { scratch, queue } = await setUp(t);
    const name = scratch.name('depth');
    await queue.publish(name, { id: 'a' }, { priority: 1 });
    await queue.publish(name, { id: 'b' }, { priority: 5 });
    await queue.publish(name, { id: 'c' }, { priority: 10 });
    await queue.publish(name, { id: 'd' }, { priority: 10, delayMs: 60_000 });
    t.match(await queue.depth(name), { queue: name, ready: 3, delayed: 1, consumers: 0 });
  });
}
