/**
 * What a publish or consume may ask for, checked the same way by every Queue implementation
 * (the RabbitMQ plugin keeps its own copy of these rules in its topology.ts), so that code
 * written against the embedded queue does not come to rely on something RabbitMQ refuses.
 */
import type { ConsumeOptions, PublishOptions } from '../ports/queue.js';

/** SPEC 8: 1 client POST, 5 default, 10 bulk sync and polling. */
export const DEFAULT_PRIORITY = 5;
export const DEFAULT_PREFETCH = 4;
export const DEFAULT_REDELIVERY_DELAY_MS = 1000;

/** RabbitMQ caps queue names at 255 bytes and the delay queues add a suffix to them. */
const QUEUE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,199}$/;

export interface CheckedPublish {
  /** The body as JSON: the copy that travels, so callers cannot change it after publishing. */
  payload: string;
  priority: number;
  delayMs: number;
}

export function checkPublish(queue: string, body: unknown, options: PublishOptions = {}): CheckedPublish {
  checkQueueName(queue);
  const priority = options.priority ?? DEFAULT_PRIORITY;
  if (!Number.isInteger(priority) || priority < 1 || priority > 10) {
    throw new TypeError(`priority must be an integer from 1 to 10, got ${String(priority)}`);
  }
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0)
    throw new TypeError(`delayMs must be a finite number >= 0, got ${String(delayMs)}`);
  // JSON, not structuredClone: RabbitMQ carries JSON, so a Date or a Map must not survive here
  // when it would arrive as a string (or {}) in production.
  const payload = JSON.stringify(body);
  if (typeof payload !== 'string') throw new TypeError('a message body must be JSON-serializable');
  return { payload, priority, delayMs: Math.ceil(delayMs) };
}

export function checkConsume(queue: string, options: ConsumeOptions = {}): Required<ConsumeOptions> {
  checkQueueName(queue);
  const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 65535)
    throw new TypeError(`prefetch must be an integer from 1 to 65535, got ${String(prefetch)}`);
  const redeliveryDelayMs = options.redeliveryDelayMs ?? DEFAULT_REDELIVERY_DELAY_MS;
  if (!Number.isFinite(redeliveryDelayMs) || redeliveryDelayMs < 0) {
    throw new TypeError(`redeliveryDelayMs must be a finite number >= 0, got ${String(redeliveryDelayMs)}`);
  }
  return { prefetch, redeliveryDelayMs: Math.ceil(redeliveryDelayMs) };
}

function checkQueueName(queue: string): void {
  // `amq.` names are reserved by the broker.
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue) || queue.startsWith('amq.'))
    throw new TypeError(`invalid queue name ${JSON.stringify(queue)}`);
}
