/**
 * What the queues look like on the broker (README "Topology"): durable priority work queues, and
 * one delay queue per (work queue, delay) that dead-letters expired messages back to its work queue.
 * With `replicated` (P17) every queue is a quorum queue, and a work queue is one queue per
 * priority level, since quorum queues cannot order three levels strictly.
 */
import type { Channel, Options } from 'amqplib';
import { kernelError } from '@opco-proxy/core';

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
  return { durable: true, arguments: delayArguments(workQueue, delayMs) };
}

function delayArguments(workQueue: string, delayMs: number): Record<string, string | number> {
  return {
    'x-message-ttl': delayMs,
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': workQueue,
    'x-expires': delayMs + DELAY_QUEUE_IDLE_MS,
  };
}

/**
 * The priority levels replicated queues keep apart (SPEC 8: client 1, default 5, bulk sync 10).
 * A priority between two levels waits with the later one: never served ahead of a message more
 * urgent than itself.
 */
export const PRIORITY_LEVELS = [1, 5, 10] as const;

export function priorityLevel(priority: number): number {
  return PRIORITY_LEVELS.find((level) => level >= priority) ?? PRIORITY_LEVELS[PRIORITY_LEVELS.length - 1];
}

/** `<work queue>.p<level>`: never the name of a classic work queue, so switching creates no clash. */
export function levelQueueName(workQueue: string, level: number): string {
  return `${workQueue}.p${level}`;
}

export function quorumWorkQueueOptions(): Options.AssertQueue {
  return { durable: true, arguments: { 'x-queue-type': 'quorum' } };
}

/**
 * A quorum delay queue: as the classic one, and its expired messages leave it only once the
 * level queue has them (at-least-once dead-lettering, which RabbitMQ allows only with
 * `reject-publish` overflow; the queue has no length limit, so that never refuses a publish).
 */
export function quorumDelayQueueOptions(target: string, delayMs: number): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      ...delayArguments(target, delayMs),
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    },
  };
}

/** Which queues a work queue is on the broker, and how they are declared: classic, or replicated (P17). */
export class Topology {
  constructor(readonly replicated: boolean) {}

  /** The queue a message of this SPEC priority waits in. */
  queueFor(workQueue: string, priority: number): string {
    return this.replicated ? levelQueueName(workQueue, priorityLevel(priority)) : workQueue;
  }

  /** The queues a consumer of `workQueue` reads, most urgent first. */
  consumed(workQueue: string): string[] {
    return this.replicated ? PRIORITY_LEVELS.map((level) => levelQueueName(workQueue, level)) : [workQueue];
  }

  workQueueOptions(): Options.AssertQueue {
    return this.replicated ? quorumWorkQueueOptions() : workQueueOptions();
  }

  /** `target` is the queue the delay queue hands its messages to (the work queue, or a level queue). */
  delayQueueOptions(target: string, delayMs: number): Options.AssertQueue {
    return this.replicated ? quorumDelayQueueOptions(target, delayMs) : delayQueueOptions(target, delayMs);
  }
}

/**
 * Declares a queue; a queue of that name with other arguments (PRECONDITION_FAILED, which also
 * closes the channel) is a coded error that names it, not an amqplib stack.
 */
export async function declareQueue(channel: Channel, name: string, options: Options.AssertQueue): Promise<void> {
  try {
    await channel.assertQueue(name, options);
  } catch (err) {
    if ((err as { code?: number }).code !== 406) throw err;
    const text = (err as Error).message;
    const reason = /with message "(.*)"/.exec(text)?.[1] ?? text;
    throw kernelError('OPCO_ERR_QUEUE_DECLARATION_REFUSED', { queue: name, reason });
  }
}
