/**
 * What the queues look like on the broker (README "Topology"): durable priority work queues, and
 * one delay queue per (work queue, delay) that dead-letters expired messages back to its work queue.
 */
import type { Options } from 'amqplib';

/** AMQP priorities run the other way from SPEC 8: higher is served first. 1..10 <-> 10..1. */
export const MAX_PRIORITY = 10;

export function toAmqpPriority(priority: number): number {
  return MAX_PRIORITY + 1 - priority;
}

/** A message without a priority is served last by RabbitMQ (0), so it reads as SPEC priority 10. */
export function fromAmqpPriority(amqpPriority: unknown): number {
  const value = typeof amqpPriority === 'number' ? amqpPriority : 0;
  return Math.min(MAX_PRIORITY, Math.max(1, MAX_PRIORITY + 1 - value));
}

/** Marks a message that a handler rejected and that comes back through a delay queue. */
export const REDELIVERED_HEADER = 'x-opco-redelivered';

export function workQueueOptions(): Options.AssertQueue {
  return { durable: true, arguments: { 'x-max-priority': MAX_PRIORITY } };
}

/**
 * The delays a broker may hold a queue for. A message's delay is rounded up to the next one (a
 * retry is never early), so a work queue never has more than this many delay queues however
 * varied its delays; a delay longer than the last goes through it and its remainder is served by
 * the consumer (DELIVER_AT_HEADER).
 */
export const DELAY_BUCKETS_MS = [
  50, 100, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000,
] as const;

export function delayBucket(delayMs: number): number {
  return DELAY_BUCKETS_MS.find((bucket) => bucket >= delayMs) ?? DELAY_BUCKETS_MS[DELAY_BUCKETS_MS.length - 1];
}

/** When a message delayed longer than the last bucket is due (epoch ms); the consumer waits out the rest. */
export const DELIVER_AT_HEADER = 'x-opco-deliver-at';

/**
 * Each delay gets its own queue because RabbitMQ only expires messages at the head of a queue:
 * with one TTL per queue, the head is always the first to expire, so nothing waits behind a
 * longer delay.
 */
export function delayQueueName(workQueue: string, delayMs: number): string {
  return `${workQueue}.delay.${delayMs}`;
}

/**
 * An unused delay queue deletes itself after this long past its delay. Publishing does not count
 * as use for `x-expires`, only declaring does, so publishers declare a delay queue again at least
 * every DELAY_QUEUE_REDECLARE_MS (well within the lease).
 */
export const DELAY_QUEUE_IDLE_MS = 10 * 60_000;
export const DELAY_QUEUE_REDECLARE_MS = 60_000;

export function delayQueueOptions(workQueue: string, delayMs: number): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      'x-message-ttl': delayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': workQueue,
      'x-expires': delayMs + DELAY_QUEUE_IDLE_MS,
    },
  };
}
