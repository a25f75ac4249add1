/**
 * The Queue port: durable work queues with priorities, delays and acknowledgements.
 * Messages carry ids only (SPEC 5.4): keys and files never travel through the queue.
 */

/** SPEC 8 priorities: lower runs first (1 client POST, 5 default, 10 bulk sync and polling). */
export type Priority = number;

export interface PublishOptions {
  /** 1 (first) to 10 (last); default 5. */
  priority?: Priority;
  /** Deliver no earlier than this many ms from now (retry backoff). */
  delayMs?: number;
}

export interface ReceivedMessage<T> {
  body: T;
  priority: Priority;
  /** True when this message was delivered before and not acknowledged (consumer died or failed). */
  redelivered: boolean;
}

/**
 * Resolving acknowledges the message. Rejecting hands it back: it is delivered again (with
 * `redelivered: true`) after the consumer's `redeliveryDelayMs`, never lost.
 */
export type MessageHandler<T> = (message: ReceivedMessage<T>) => Promise<void>;

export interface ConsumeOptions {
  /** Unacknowledged messages this consumer holds at once; default 4. */
  prefetch?: number;
  /** Delay before a rejected message comes back; default 1000. */
  redeliveryDelayMs?: number;
}

export interface Consumer {
  /** Stops taking new messages and waits for the handlers in progress to settle. */
  cancel(): Promise<void>;
}

/**
 * The broker cannot take or hand out messages for a while: retry later. Implementations raise it
 * from publish() when the message was not accepted, so one mapping answers 503 UNAVAILABLE (D5).
 */
export class QueueUnavailableError extends Error {
  readonly code = 'QUEUE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}

/** How much waits in one work queue (GET /admin/queues, P9): the type of its JSON Schema. */
export type { QueueDepth } from '@opco-proxy/schemas';
import type { QueueDepth } from '@opco-proxy/schemas';

export interface Queue {
  readonly kind: string;
  /**
   * Whether queued and delayed messages outlive this process (RabbitMQ) or not (the embedded
   * queue). Work that is not durable is restored from the Store when a worker starts.
   */
  readonly durable: boolean;
  /**
   * Resolves once the message is held durably by the backend (publisher confirm for RabbitMQ);
   * rejects when it cannot be accepted, so the caller can refuse the work (503 UNAVAILABLE).
   */
  publish<T>(queue: string, body: T, options?: PublishOptions): Promise<void>;
  consume<T>(queue: string, handler: MessageHandler<T>, options?: ConsumeOptions): Promise<Consumer>;
  /** Resolves when the backend answers; rejects otherwise (used by /ready). */
  ping(): Promise<void>;
  /** The depth of a work queue; a queue never used is empty. Rejects with QueueUnavailableError when the backend does not answer. */
  depth(queue: string): Promise<QueueDepth>;
  close(): Promise<void>;
}
