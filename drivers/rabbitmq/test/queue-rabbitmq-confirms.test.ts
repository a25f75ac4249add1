import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { createQueue } from '../src/index.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { ScratchQueues } from './fixtures/scratch-queues.js';

/**
 * publish() resolves only once the broker holds the message (publisher confirm), and reports
 * what it could not place instead of dropping it: the jobs plugin answers 202 on that promise.
 */
const url = brokerUrl(t, 'RabbitMQ publisher confirms');

if (url) {
  const setUp = async (t: Test) => {
    const scratch = new ScratchQueues(url);
    const queue = await createQueue({ url, publishTimeoutMs: 3000 });
    const connection = await amqp.connect(url);
    const channel = await connection.createChannel();
    t.teardown(async () => {
      await queue.close();
      await connection.close();
      await scratch.deleteAll();
    });
    const count = async (name: string) => (await channel.checkQueue(name)).messageCount;
    return { scratch, queue, connection, channel, count };
  };

  t.test('each publish is in the queue when it resolves', async (t) => {
    const { scratch, queue, count } = await setUp(t);
    const name = scratch.name('confirmed');
    for (let i = 1; i <= 10; i++) {
      await queue.publish(name, { id: `s${i}` });
      t.equal(await count(name), i, `after publish ${i}`);
    }
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => queue.publish(name, { id: `p${i}` }, { priority: 1 + (i % 10) })),
    );
    t.equal(await count(name), 60, 'after 50 concurrent publishes');
  });

  t.test('a queue deleted behind the publisher: publish rejects, the next one declares it again', async (t) => {
    const { scratch, queue, connection, count } = await setUp(t);
    const name = scratch.name('deleted');
    await queue.publish(name, { id: 'one' });
    const deleting = await connection.createChannel();
    await deleting.deleteQueue(name);
    await deleting.close();
    await t.rejects(queue.publish(name, { id: 'lost?' }), /no queue/, 'the broker returned it as unroutable');
    await queue.publish(name, { id: 'two' });
    t.equal(await count(name), 1, 'declared again, holding the new message');
  });

  t.test('a declaration the broker refuses fails that publish only', async (t) => {
    const { scratch, queue, connection, count } = await setUp(t);
    const clash = scratch.name('clash');
    const declaring = await connection.createChannel();
    // Same name, other arguments: RabbitMQ refuses our declaration (PRECONDITION_FAILED).
    await declaring.assertQueue(clash, { durable: true, arguments: { 'x-max-length': 5 } });
    await declaring.close();
    await t.rejects(queue.publish(clash, { id: 'x' }), /PRECONDITION/);
    await t.rejects(queue.publish(clash, { id: 'y' }), /PRECONDITION/, 'again, not a hang');
    const fine = scratch.name('fine');
    await queue.publish(fine, { id: 'z' });
    t.equal(await count(fine), 1, 'other queues are unaffected');
    t.equal(await count(clash), 0, 'nothing reached the clashing queue');
  });
}
