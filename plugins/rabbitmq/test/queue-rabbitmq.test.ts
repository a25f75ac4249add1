import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { queueContract } from '@opco-proxy/core/queue-contract';
import { createQueue, type QueueLogger } from '../src/index.js';
import { DELAY_QUEUE_IDLE_MS } from '../src/topology.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { waitFor } from './fixtures/eventually.js';
import { ScratchQueues } from './fixtures/scratch-queues.js';

const url = brokerUrl(t, 'the RabbitMQ queue');

if (url) {
  t.test('the queue contract on RabbitMQ', async (t) => {
    const scratch = new ScratchQueues(url);
    queueContract(t, async () => scratch.track(await createQueue({ url })), { cleanup: (name) => scratch.delete(name) });
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
    return { scratch, queue, channel, logged };
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
      [[{ id: 'high' }, 10], [{ id: 'default' }, 6], [{ id: 'low' }, 1]],
    );
    for (const m of got) {
      t.equal(m.properties.deliveryMode, 2, 'persistent');
      t.equal(m.properties.contentType, 'application/json');
    }
  });

  t.test('a delayed message waits in <queue>.delay.<ms>, which dead-letters it to the work queue', async (t) => {
    const { scratch, queue, channel } = await setUp(t);
    const name = scratch.name('delayqueue');
    await queue.publish(name, { id: 'later' }, { delayMs: 60_000 });
    await queue.publish(name, { id: 'soon' }, { delayMs: 300, priority: 2 });
    await channel.assertQueue(`${name}.delay.60000`, {
      durable: true,
      arguments: { 'x-message-ttl': 60_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': name, 'x-expires': 60_000 + DELAY_QUEUE_IDLE_MS },
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
    await waitFor(() => got.length === 1, 5000, 'the consumer of the unprefixed name gets it');
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
    await waitFor(() => got.length === 2, 5000, 'the JSON messages arrive');
    t.strictSame(got, [{ id: 'first' }, { id: 'last' }]);
    t.ok(logged.some(([level, , message]) => level === 'error' && /not JSON/.test(String(message))), 'logged as an error');
    await queue.close();
    t.equal((await channel.checkQueue(name)).messageCount, 0, 'gone from the queue');
  });

  t.test('kind is rabbitmq and ping answers', async (t) => {
    const { queue } = await setUp(t);
    t.equal(queue.kind, 'rabbitmq');
    await queue.ping();
  });
}
