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
