/**
 * The depth of a work queue on the broker (Queue.depth, GET /admin/queues): `checkQueue` on the
 * work queue (ready messages and consumers; with replicated queues, on each level queue) and on
 * each of its delay queues (P8), which hold the delayed messages. AMQP does not tell how many messages consumers hold unacknowledged (only the
 * management plugin's HTTP API does), so that stays unknown.
 */
import type { ChannelModel } from 'amqplib';
import type { QueueDepth } from '@opco-proxy/core';
import { DELAY_BUCKETS_MS, delayQueueName, type Topology } from './topology.js';
import { withDeadline } from './deadline.js';

const DEPTH_TIMEOUT_MS = 5000;

export async function queueDepth(
  model: ChannelModel,
  queue: string,
  brokerName: string,
  topology: Topology,
): Promise<QueueDepth> {
  const deadline = Date.now() + DEPTH_TIMEOUT_MS;
  const failure = () => new Error(`RabbitMQ did not tell the depth of ${brokerName} within ${DEPTH_TIMEOUT_MS} ms`);
  const works = topology.consumed(brokerName);
  const delayNames = works.flatMap((work) => DELAY_BUCKETS_MS.map((ms) => delayQueueName(work, ms)));
  const counts = await withDeadline(
    Promise.all([...works, ...delayNames].map((name) => check(model, name))),
    deadline,
    failure,
  );
  const sum = (found: typeof counts) => found.reduce((total, count) => total + (count?.messageCount ?? 0), 0);
  return {
    queue,
    ready: sum(counts.slice(0, works.length)),
    delayed: sum(counts.slice(works.length)),
    unacknowledged: null,
    // Each consumer reads every level queue: the most urgent one counts them.
    consumers: counts[0]?.consumerCount ?? 0,
  };
}

/** One channel per check: the broker closes the channel of a check on a queue that does not exist (404). */
async function check(
  model: ChannelModel,
  name: string,
): Promise<{ messageCount: number; consumerCount: number } | null> {
  const channel = await model.createChannel();
  channel.on('error', () => undefined); // the 404 also arrives as an 'error' event
  try {
    return await channel.checkQueue(name);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  } finally {
    await channel.close().catch(() => undefined);
  }
}
