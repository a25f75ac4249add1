import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { createQueue, type QueueLogger } from '../src/index.js';
import { waitFor } from './fixtures/eventually.js';
import { ScratchQueues } from './fixtures/scratch-queues.js';

/**
 * What replicated queues are for: on a three-node cluster (.ci/rabbitmq-cluster.sh start DIR),
 * the node the queue is connected to is killed with SIGKILL, and publishing, consuming and the
 * delay queues carry on through the other nodes without losing a confirmed message. Runs only
 * with RABBITMQ_CLUSTER_URLS (the script prints it) and RABBITMQ_CLUSTER_DIR (its DIR, for the
 * nodes' pid files); the killed node is started again at the end. About 40 s (elections, and the restart).
 */
const urls = process.env.RABBITMQ_CLUSTER_URLS?.split(',').filter(Boolean) ?? [];
const dir = process.env.RABBITMQ_CLUSTER_DIR;
const script = join(import.meta.dirname, '../../../../.ci/rabbitmq-cluster.sh');

if (urls.length < 3 || !dir) {
  t.plan(0, 'RABBITMQ_CLUSTER_URLS and RABBITMQ_CLUSTER_DIR are not set; see .ci/rabbitmq-cluster.sh');
} else {
  t.test('kill -9 of the node in use: confirmed messages, delayed ones included, are all consumed through the others', async (t) => {
    const logged: string[] = [];
    const log = (level: string) => (data: object, message: string) => logged.push(`${level} ${message} ${JSON.stringify(data)}`);
    const logger: QueueLogger = { info: log('info'), warn: log('warn'), error: log('error') };
    // The first node answers, so the queue is on node 1: the one killed below.
    const queue = await createQueue({ url: urls, replicated: true, publishTimeoutMs: 15_000, reconnect: { initialDelayMs: 100, maxDelayMs: 1000 }, logger });
    const scratch = new ScratchQueues(urls[1], '', true);
    const tracked = scratch.track(queue);
    t.teardown(async () => {
      await queue.close();
      await scratch.deleteAll();
      await promisify(execFile)(script, ['start-node', dir, '1']);
    });
    const name = scratch.name('cluster');
    const seen = new Map<string, number>();
    await tracked.consume<{ id: string }>(name, async (message) => void seen.set(message.body.id, (seen.get(message.body.id) ?? 0) + 1), { prefetch: 4 });
    const confirmed: string[] = [];
    const priorities = [1, 5, 10];
    const publish = async (id: string, delayMs = 0) => {
      await tracked.publish(name, { id }, { priority: priorities[confirmed.length % 3], delayMs });
      confirmed.push(id);
    };
    for (let i = 0; i < 30; i++) await publish(`before${i}`);
    for (let i = 0; i < 6; i++) await publish(`delayed${i}`, 2000);
    await waitFor(() => confirmed.filter((id) => id.startsWith('before')).every((id) => seen.has(id)), 10_000, 'the first messages are consumed');

    const pid = Number(readFileSync(join(dir, 'node1', 'pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    t.comment(`killed opco1 (pid ${pid})`);
    let failed = 0;
    for (let i = 0; i < 30; i++) {
      await publish(`after${i}`).catch((err: Error) => {
        failed++;
        t.comment(`after${i}: ${err.message}`);
      });
    }
    t.ok(failed <= 1, `at most the publish in flight at the kill fails (${failed})`);
    await waitFor(() => confirmed.every((id) => seen.has(id)), 30_000, 'every confirmed message is consumed');
    t.pass(`all ${confirmed.length} confirmed messages consumed, the delayed ones through the replicated delay queues`);
    const twice = [...seen.values()].filter((count) => count > 1).length;
    t.ok(twice <= 4, `at most the prefetch window held at the kill comes twice (${twice})`);
    t.ok(logged.some((line) => /reconnected to RabbitMQ.*"publishing"/.test(line) && !line.includes(new URL(urls[0]).port)), 'publishing moved to another node');
    t.ok(logged.some((line) => /reconnected to RabbitMQ.*"consuming"/.test(line)), 'and consuming');
  });
}
