import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { createQueue, type QueueLogger } from '../src/index.js';
import { PRIORITY_LEVELS, levelQueueName, quorumWorkQueueOptions } from '../src/topology.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';

/**
 * What replicated queues are for: on a three-node cluster (.ci/rabbitmq-cluster.sh start DIR), a
 * node is killed with SIGKILL, and publishing, consuming and the delay queues carry on through the
 * other nodes without losing a confirmed message. Runs only with RABBITMQ_CLUSTER_URLS (the script
 * prints it) and RABBITMQ_CLUSTER_DIR (its DIR, for the nodes' pid files); the killed node is
 * started again at the end of each test. About 10 s each, 5 of them restarting the killed node.
 */
const urls = process.env.RABBITMQ_CLUSTER_URLS?.split(',').filter(Boolean) ?? [];
const dir = process.env.RABBITMQ_CLUSTER_DIR;
const script = join(import.meta.dirname, '../../../../.ci/rabbitmq-cluster.sh');

/**
 * The queue on the cluster (it connects to node 1, the first that answers), a consumer, 30
 * messages and 6 delayed ones before node `kill` (1-based) is killed, 30 after; every confirmed
 * one must be consumed. With `leadersOn`, the level queues are declared first through that node,
 * which makes it their leader (RabbitMQ places a new quorum queue's leader on the declaring node).
 */
async function killScenario(t: Test, kill: number, leadersOn?: number): Promise<string[]> {
  const logged: string[] = [];
  const log = (level: string) => (data: object, message: string) =>
    logged.push(`${level} ${message} ${JSON.stringify(data)}`);
  const logger: QueueLogger = { info: log('info'), warn: log('warn'), error: log('error') };
  const survivor = urls[kill === 2 ? 2 : 1];
  const scratch = new ScratchQueues(survivor, '', true);
  const name = scratch.name(`cluster${kill}`);
  if (leadersOn) {
    const connection = await amqp.connect(urls[leadersOn - 1]);
    const channel = await connection.createChannel();
    for (const level of PRIORITY_LEVELS)
      await channel.assertQueue(levelQueueName(name, level), quorumWorkQueueOptions());
    await connection.close();
  }
  const queue = await createQueue({
    url: urls,
    replicated: true,
    publishTimeoutMs: 15_000,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
    logger,
  });
  const tracked = scratch.track(queue);
  t.teardown(async () => {
    await queue.close();
    const { stdout } = await promisify(execFile)(script, ['start-node', dir!, String(kill)]);
    t.comment(stdout.trim());
    const deleting = Date.now();
    await scratch.deleteAll(); // with every member up: a quorum queue missing one deletes slowly
    t.comment(`queues deleted in ${Date.now() - deleting} ms`);
  });
  const seen = new Map<string, number>();
  await tracked.consume<{ id: string }>(
    name,
    async (message) => void seen.set(message.body.id, (seen.get(message.body.id) ?? 0) + 1),
    { prefetch: 4 },
  );
  const confirmed: string[] = [];
  const publish = async (id: string, delayMs = 0) => {
    await tracked.publish(name, { id }, { priority: PRIORITY_LEVELS[confirmed.length % 3], delayMs });
    confirmed.push(id);
  };
  for (let i = 0; i < 30; i++) await publish(`before${i}`);
  for (let i = 0; i < 6; i++) await publish(`delayed${i}`, 2000);
  await eventually(
    () => confirmed.filter((id) => id.startsWith('before')).every((id) => seen.has(id)),
    'the first messages are consumed',
    10_000,
  );

  const pid = Number(readFileSync(join(dir!, `node${kill}`, 'pid'), 'utf8'));
  process.kill(pid, 'SIGKILL');
  const killed = Date.now();
  t.comment(`killed opco${kill} (pid ${pid})`);
  let failed = 0;
  for (let i = 0; i < 30; i++) {
    await publish(`after${i}`).catch((err: Error) => {
      failed++;
      t.comment(`after${i}: ${err.message}`);
    });
  }
  t.equal(failed, 0, 'every publish confirmed, the one in flight at the kill sent again');
  t.comment(`the 30 publishes after the kill took ${Date.now() - killed} ms`);
  await eventually(() => confirmed.every((id) => seen.has(id)), 'every confirmed message is consumed', 30_000);
  t.comment(`all consumed ${Date.now() - killed} ms after the kill`);
  t.pass(`all ${confirmed.length} confirmed messages consumed, the delayed ones through the replicated delay queues`);
  const twice = [...seen.values()].filter((count) => count > 1).length;
  t.ok(twice <= 4, `at most the prefetch window held at the kill comes twice (${twice})`);
  return logged;
}

/**
 * Delayed messages whose delay runs out while the leader of their level queue is gone: the delay
 * queue (led by node 1, where the queue declared it) dead-letters them at least once, so they
 * leave it once the level queue, with its new leader, confirms them. A steady stream of short
 * delays, so that some are on their way to the level queue at the kill. (When the delay queue's
 * own leader goes too, RabbitMQ 3.10 keeps its expired messages until that node is back: P17;
 * the service's overdue sweeps carry that case, e2e/test/cluster.test.ts.)
 */
async function delayedAcrossLeaderLoss(t: Test): Promise<void> {
  const scratch = new ScratchQueues(urls[1], '', true);
  const name = scratch.name('cluster-delayed');
  const connection = await amqp.connect(urls[2]);
  const channel = await connection.createChannel();
  for (const level of PRIORITY_LEVELS) await channel.assertQueue(levelQueueName(name, level), quorumWorkQueueOptions());
  await connection.close();
  const queue = await createQueue({
    url: urls,
    replicated: true,
    publishTimeoutMs: 15_000,
    reconnect: { initialDelayMs: 100, maxDelayMs: 1000 },
  });
  const tracked = scratch.track(queue);
  t.teardown(async () => {
    await queue.close();
    await promisify(execFile)(script, ['start-node', dir!, '3']);
    await scratch.deleteAll();
  });
  const seen = new Set<string>();
  await tracked.consume<{ id: string }>(name, async (message) => void seen.add(message.body.id), { prefetch: 8 });
  const ids: string[] = [];
  const publishing = (async () => {
    for (let i = 0; i < 200; i++) {
      ids.push(`delayed${i}`);
      await tracked.publish(name, { id: `delayed${i}` }, { delayMs: 300 });
      await sleep(10);
    }
  })();
  await eventually(() => seen.size >= 20, 'the first delayed messages arrive', 10_000);
  process.kill(Number(readFileSync(join(dir!, 'node3', 'pid'), 'utf8')), 'SIGKILL');
  const killed = Date.now();
  t.comment(`killed opco3, the level queues' leader, while delayed messages move (${seen.size} arrived)`);
  await publishing;
  await eventually(() => ids.every((id) => seen.has(id)), 'every delayed message consumed', 20_000);
  t.pass(`all ${ids.length} delayed messages consumed, the last ${Date.now() - killed} ms after the kill`);
}

if (urls.length < 3 || !dir) {
  t.plan(0, 'RABBITMQ_CLUSTER_URLS and RABBITMQ_CLUSTER_DIR are not set; see .ci/rabbitmq-cluster.sh');
} else {
  t.test(
    'kill -9 of the node in use: publishing and consuming move to another node, nothing confirmed is lost',
    async (t) => {
      const logged = await killScenario(t, 1);
      t.ok(
        logged.some(
          (line) => /reconnected to RabbitMQ.*"publishing"/.test(line) && !line.includes(new URL(urls[0]).port),
        ),
        'publishing moved to another node',
      );
      t.ok(
        logged.some((line) => /reconnected to RabbitMQ.*"consuming"/.test(line)),
        'and consuming',
      );
    },
  );

  t.test(
    'kill -9 of the node leading the queues, not the one in use: the queues elect another leader, nothing confirmed is lost',
    async (t) => {
      const logged = await killScenario(t, 3, 3);
      t.notOk(
        logged.some((line) => /lost the connection/.test(line)),
        'the connections stayed up',
      );
    },
  );

  t.test(
    'delayed messages due while their level queue has no leader arrive once it has one again',
    delayedAcrossLeaderLoss,
  );
}
