import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { queueContract } from '@opco-proxy/core/queue-contract';
import { createQueue, type QueueLogger } from '../src/index.js';
import {
  DELAY_BUCKETS_MS,
  DELAY_QUEUE_IDLE_MS,
  DELIVER_AT_HEADER,
  delayBucket,
  workQueueOptions,
} from '../src/topology.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';

const url = brokerUrl(t, 'the RabbitMQ queue');

if (url) {
  t.test('the queue contract on RabbitMQ', async (t) => {
    const scratch = new ScratchQueues(url);
    queueContract(t, async () => scratch.track(await createQueue({ url })), {
      cleanup: (name) => scratch.delete(name),
    });
  });

  /** Opens the queue and a plain amqplib channel to look at what it did on the broker. */
  const setUp = async (t: Test, prefix?: string) => {
    const scratch = new ScratchQueues(url, prefix);
    const logged: unknown[][] = [];
    const logger: QueueLogger = {
      info: (...args) => logged.push(['info', ...args]),
      warn: (...args) => logged.push(['warn', ...args]),
      error: (...args) => logged.push(['error', ...args]),
    };
    // Tracked, so that the delay queues it makes are deleted too.
    const queue = scratch.track(await createQueue({ url, prefix, logger }));
    const connection = await amqp.connect(url);
    const channel = await connection.createChannel();
    t.teardown(async () => {
      await queue.close();
      await connection.close();
      await scratch.deleteAll();
    });
    return { scratch, queue, channel, connection, logged };
  };

  t.test('work queues are durable priority queues; messages persistent JSON with AMQP priority 11 - p', async (t) => {
    const { scratch, queue, channel } = await setUp(t);
    const name = scratch.name('topology');
    await queue.publish(name, { id: 'low' }, { priority: 10 });
    await queue.publish(name, { id: 'default' });
    await queue.publish(name, { id: 'high' }, { priority: 1 });
    // Declaring it again with exactly these arguments succeeds only if that is how it was made.
    await channel.assertQueue(name, { durable: true, arguments: { 'x-max-priority': 10 } });
    const got = [];
    for (let i = 0; i < 3; i++) {
      const message = await channel.get(name, { noAck: true });
      if (message) got.push(message);
    }
    t.strictSame(
      got.map((m) => [JSON.parse(m.content.toString()), m.properties.priority]),
      [
        [{ id: 'high' }, 10],
        [{ id: 'default' }, 6],
        [{ id: 'low' }, 1],
      ],
    );
    for (const m of got) {
      t.equal(m.properties.deliveryMode, 2, 'persistent');
      t.equal(m.properties.contentType, 'application/json');
    }
  });

  t.test(
    'a thousand retries with varied delays use a bounded set of delay queues, never an early delivery',
    async (t) => {
      const { scratch, queue, connection } = await setUp(t);
      const name = scratch.name('buckets');
      const delays = Array.from({ length: 1000 }, (_, i) => 1 + ((i * 7919) % 3_600_000));
      for (const delayMs of delays) await queue.publish(name, { delayMs }, { delayMs });
      const exists = async (queueName: string) => {
        const probe = await connection.createChannel();
        probe.on('error', () => undefined);
        try {
          await probe.checkQueue(queueName);
          return true;
        } catch {
          return false;
        } finally {
          await probe.close().catch(() => undefined);
        }
      };
      const made = [];
      for (const bucket of DELAY_BUCKETS_MS) if (await exists(`${name}.delay.${bucket}`)) made.push(bucket);
      t.ok(
        made.length <= DELAY_BUCKETS_MS.length,
        `${made.length} delay queues for ${new Set(delays).size} distinct delays`,
      );
      const strays = [...new Set(delays)]
        .filter((d) => !(DELAY_BUCKETS_MS as readonly number[]).includes(d))
        .slice(0, 50);
      for (const d of strays) t.notOk(await exists(`${name}.delay.${d}`), `no queue for a delay of ${d} ms`);
      for (const d of [1, 999, 1000, 1001, 3_600_000, 7_200_000])
        t.ok(delayBucket(d) >= Math.min(d, 3_600_000), `${d} ms waits at least that long in ${delayBucket(d)}`);
    },
  );

  t.test('a message due later than its delay queue held it waits out the rest before its handler runs', async (t) => {
    const { scratch, queue, channel } = await setUp(t);
    const name = scratch.name('deliverat');
    await channel.assertQueue(name, workQueueOptions());
    const due = Date.now() + 400;
    channel.sendToQueue(name, Buffer.from(JSON.stringify({ id: 'late' })), {
      persistent: true,
      headers: { [DELIVER_AT_HEADER]: due },
    });
    const handled: number[] = [];
    const consumer = await queue.consume(name, async () => void handled.push(Date.now()));
    t.teardown(() => consumer.cancel());
    await eventually(() => handled.length === 1, 'the late message', 10_000);
    t.ok(handled[0] >= due, 'not handed to the handler before it was due');
  });

  t.test('a delayed message waits in <queue>.delay.<ms>, which dead-letters it to the work queue', async (t) => {
    const { scratch, queue, channel } = await setUp(t);
    const name = scratch.name('delayqueue');
    await queue.publish(name, { id: 'later' }, { delayMs: 60_000 });
    await queue.publish(name, { id: 'soon' }, { delayMs: 250, priority: 2 });
    await channel.assertQueue(`${name}.delay.60000`, {
      durable: true,
      arguments: {
        'x-message-ttl': 60_000,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': name,
        'x-expires': 60_000 + DELAY_QUEUE_IDLE_MS,
      },
    });
    t.equal((await channel.checkQueue(`${name}.delay.60000`)).messageCount, 1, 'the long delay waits in its own queue');
    let arrived: amqp.GetMessage | false = false;
    const deadline = Date.now() + 5000;
    while (!arrived && Date.now() < deadline) {
      arrived = await channel.get(name, { noAck: true });
      if (!arrived) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.ok(arrived, 'the short delay came back to the work queue');
    if (arrived) {
      t.strictSame(JSON.parse(arrived.content.toString()), { id: 'soon' });
      t.equal(arrived.properties.priority, 9, 'with its priority');
    }
    t.equal((await channel.checkQueue(name)).messageCount, 0, 'and nothing else yet');
  });

  t.test('prefix: queues are named <prefix>.<queue> on the broker', async (t) => {
    const prefix = 'rabbit-test-prefix';
    const { scratch, queue, channel } = await setUp(t, prefix);
    const name = scratch.name('prefixed');
    await queue.publish(name, { id: 'p' });
    t.equal((await channel.checkQueue(`${prefix}.${name}`)).messageCount, 1);
    const got: unknown[] = [];
    await queue.consume(name, async (message) => {
      got.push(message.body);
    });
    await eventually(() => got.length === 1, 'the consumer of the unprefixed name gets it', 5000);
    t.strictSame(got, [{ id: 'p' }]);
  });

  t.test('a message that is not JSON is dropped with an error log, not redelivered forever', async (t) => {
    const { scratch, queue, channel, logged } = await setUp(t);
    const name = scratch.name('poison');
    await queue.publish(name, { id: 'first' });
    channel.sendToQueue(name, Buffer.from('not json'), { priority: 6 });
    await queue.publish(name, { id: 'last' }, { priority: 10 });
    const got: unknown[] = [];
    await queue.consume(name, async (message) => {
      got.push(message.body);
    });
    await eventually(() => got.length === 2, 'the JSON messages arrive', 5000);
    t.strictSame(got, [{ id: 'first' }, { id: 'last' }]);
    t.ok(
      logged.some(([level, , message]) => level === 'error' && /not JSON/.test(String(message))),
      'logged as an error',
    );
    await queue.close();
    t.equal((await channel.checkQueue(name)).messageCount, 0, 'gone from the queue');
  });

  t.test('kind is rabbitmq and ping answers', async (t) => {
    const { queue } = await setUp(t);
    t.equal(queue.kind, 'rabbitmq');
    await queue.ping();
  });
}
