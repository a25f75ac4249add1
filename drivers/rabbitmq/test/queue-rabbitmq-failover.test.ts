import { createServer } from 'node:net';
import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { systemClock, type QueueSection } from '@opco-proxy/core';
import { createQueue, queueDriver, type QueueLogger } from '../src/index.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';
import { startRelay } from './fixtures/tcp-relay.js';

/**
 * `url` as a list of nodes: the queue uses the first that answers and moves to another when its
 * node goes. Two TCP relays to the one machine broker play two nodes (what the nodes hold is the
 * cluster's business, queue-rabbitmq-cluster.test.ts); cutting one and refusing connections on it
 * plays its loss.
 */
const url = brokerUrl(t, 'RabbitMQ failover between URLs');

/** A port where nothing listens: a node that is down. */
async function deadUrl(broker: string): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const dead = new URL(broker);
  dead.hostname = '127.0.0.1';
  dead.port = String(port);
  return dead.href;
}

if (url) {
  const logs = () => {
    const logged: string[] = [];
    const log = (level: string) => (data: object, message: string) =>
      logged.push(`${level} ${message} ${JSON.stringify(data)}`);
    const logger: QueueLogger = { info: log('info'), warn: log('warn'), error: log('error') };
    return { logged, logger };
  };

  t.test('a first URL that is down: the queue starts on the next one', async (t) => {
    const scratch = new ScratchQueues(url);
    const { logged, logger } = logs();
    const queue = scratch.track(await createQueue({ url: [await deadUrl(url), url], logger }));
    t.teardown(async () => {
      await queue.close();
      await scratch.deleteAll();
    });
    const name = scratch.name('second');
    await queue.publish(name, { id: 'a' });
    const seen: string[] = [];
    await queue.consume<{ id: string }>(name, async (message) => void seen.push(message.body.id));
    await eventually(() => seen.length === 1, 'the message arrives', 5000);
    t.strictSame(seen, ['a']);
    t.ok(
      logged.some((line) => /node unreachable; trying the next one/.test(line)),
      'the dead node is logged',
    );
    t.notMatch(logged.join('\n'), /guest:guest@/, 'without the password');
  });

  t.test('the config section: queue.url as a list and replicated reach the driver', async (t) => {
    const scratch = new ScratchQueues(url, '', true);
    const section = { type: 'rabbitmq', url: [await deadUrl(url), url], replicated: true } as unknown as QueueSection;
    const queue = scratch.track(await queueDriver.open(section, { clock: systemClock }));
    t.teardown(async () => {
      await queue.close();
      await scratch.deleteAll();
    });
    const name = scratch.name('section');
    await queue.publish(name, { id: 'a' }, { priority: 1 });
    const connection = await amqp.connect(url);
    t.teardown(() => connection.close());
    t.equal(
      (await (await connection.createChannel()).checkQueue(`${name}.p1`)).messageCount,
      1,
      'in its quorum level queue',
    );
  });

  t.test('every URL down: start-up fails naming each node, without passwords', async (t) => {
    const error = await createQueue({ url: [await deadUrl(url), await deadUrl(url)] }).then(
      async (queue) => {
        await queue.close();
        return undefined;
      },
      (err: unknown) => err as Error,
    );
    t.match(
      error?.message,
      /cannot connect to RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:\d+.*; cannot connect to RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:\d+/,
    );
    t.notMatch(error?.message ?? '', /guest:guest/);
  });

  const twoNodes = async (t: Test) => {
    const scratch = new ScratchQueues(url, '', true);
    const first = await startRelay(url);
    const second = await startRelay(url);
    const { logged, logger } = logs();
    const queue = scratch.track(
      await createQueue({
        url: [first.url, second.url],
        replicated: true,
        publishTimeoutMs: 3000,
        reconnect: { initialDelayMs: 100, maxDelayMs: 400 },
        logger,
      }),
    );
    t.teardown(async () => {
      await queue.close();
      await first.close();
      await second.close();
      await scratch.deleteAll();
    });
    return { scratch, first, second, queue, logged };
  };

  t.test('the node in use goes: publishing and consuming move to the other, nothing confirmed is lost', async (t) => {
    const { scratch, first, second, queue, logged } = await twoNodes(t);
    const name = scratch.name('failover');
    const seen = new Set<string>();
    await queue.consume<{ id: string }>(name, async (message) => void seen.add(message.body.id), { prefetch: 2 });
    const confirmed: string[] = [];
    const publish = async (id: string) => {
      await queue.publish(name, { id }, { priority: confirmed.length % 2 === 0 ? 1 : 10 });
      confirmed.push(id);
    };
    for (let i = 0; i < 10; i++) await publish(`before${i}`);
    await eventually(() => seen.size === 10, 'the first messages are consumed', 5000);
    t.ok(first.connections >= 2 && second.connections === 0, 'both connections on the first node');

    first.refuse(true); // the node is gone: new connections refused, open ones cut
    first.cut();
    // The one in flight at the cut is sent again on the other node; the next ones wait for it.
    for (let i = 0; i < 10; i++)
      await publish(`after${i}`).catch((err: Error) => t.comment(`after${i}: ${err.message}`));
    t.equal(confirmed.length, 20, 'every publish confirmed');
    await eventually(() => confirmed.every((id) => seen.has(id)), 'every confirmed message is consumed', 15_000);
    t.pass('every confirmed message was consumed after the move');
    t.ok(second.connections >= 2, 'publishing and consuming reconnected through the second node');
    t.ok(
      logged.some(
        (line) =>
          /reconnected to RabbitMQ.*"publishing"/.test(line) && line.includes(`127.0.0.1:${new URL(second.url).port}`),
      ),
      'the log names the node it moved to',
    );
    await queue.ping();
  });
}
