/**
 * The embedded Queue (D3 `queue: {type: "embedded"}`): in-process work queues for demo mode and
 * a single small machine, with the semantics of the RabbitMQ one (drivers/rabbitmq): priorities,
 * delays, bounded prefetch, redelivery of rejected messages.
 *
 * In memory only: what is queued or delayed when the process stops is gone. Several processes
 * need the RabbitMQ queue.
 */
import {
  QueueUnavailableError,
  type Consumer,
  type ConsumeOptions,
  type MessageHandler,
  type PublishOptions,
  type Queue,
  type QueueDepth,
  type ReceivedMessage,
} from '../ports/queue.js';
import { checkConsume, checkPublish } from './message-rules.js';
import { systemClock, type Clock, type Timer } from '../clock.js';

/** Delays run on `clock`, so tests move retries forward instead of waiting for them. */
export function createEmbeddedQueue(options: { clock?: Clock } = {}): Queue {
  return new EmbeddedQueue(options.clock ?? systemClock);
}

interface Envelope {
  payload: string;
  priority: number;
  /** Publication order, so that messages of one priority come out first in, first out. */
  seq: number;
  redelivered: boolean;
}

class EmbeddedQueue implements Queue {
  readonly kind = 'embedded';
  readonly durable = false;
  private readonly queues = new Map<string, WorkQueue>();
  private readonly timers = new Set<Timer>();
  private readonly consumers = new Set<EmbeddedConsumer>();
  private seq = 0;
  private closed = false;

  constructor(private readonly clock: Clock) {}

  async publish<T>(queue: string, body: T, options?: PublishOptions): Promise<void> {
    this.assertOpen();
    const { payload, priority, delayMs } = checkPublish(queue, body, options);
    this.enqueue(queue, { payload, priority, seq: 0, redelivered: false }, delayMs);
  }

  async consume<T>(queue: string, handler: MessageHandler<T>, options?: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    const { prefetch, redeliveryDelayMs } = checkConsume(queue, options);
    const work = this.workQueue(queue);
    const consumer = new EmbeddedConsumer(work, handler as MessageHandler<unknown>, prefetch, (envelope) => {
      // A rejected message goes behind the others of its priority, as on RabbitMQ where it
      // comes back through the delay queue.
      this.enqueue(queue, { ...envelope, redelivered: true }, redeliveryDelayMs);
    });
    this.consumers.add(consumer);
    consumer.onCancel = () => this.consumers.delete(consumer);
    work.addConsumer(consumer);
    return consumer;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async depth(queue: string): Promise<QueueDepth> {
    this.assertOpen();
    const work = this.queues.get(queue);
    return {
      queue,
      ready: work?.readyCount() ?? 0,
      delayed: work?.delayed ?? 0,
      unacknowledged: work?.inFlight() ?? 0,
      consumers: work?.consumerCount() ?? 0,
    };
  }

  /** Cancels every consumer (waiting for their handlers), drops timers and queued messages. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
    await Promise.all([...this.consumers].map((consumer) => consumer.cancel()));
    this.queues.clear();
  }

  private enqueue(queue: string, envelope: Envelope, delayMs: number): void {
    if (this.closed) return; // a handler that settles during close(): the message goes with the rest
    const work = this.workQueue(queue);
    const push = () => work.push({ ...envelope, seq: this.seq++ });
    if (delayMs <= 0) {
      push();
      return;
    }
    work.delayed += 1;
    // The clock's timers never keep an otherwise finished process alive.
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(timer);
      work.delayed -= 1;
      if (!this.closed) push();
    }, delayMs);
    this.timers.add(timer);
  }

  private workQueue(name: string): WorkQueue {
    let work = this.queues.get(name);
    if (!work) {
      work = new WorkQueue();
      this.queues.set(name, work);
    }
    return work;
  }

  private assertOpen(): void {
    if (this.closed) throw new QueueUnavailableError('the embedded queue is closed');
  }
}

/** Ready messages of one queue, in delivery order, and the consumers sharing them. */
class WorkQueue {
  private readonly ready: Envelope[] = [];
  private readonly consumers: EmbeddedConsumer[] = [];
  /** Round robin, so that consumers with room share the work instead of the first taking it all. */
  private turn = 0;
  /** Messages waiting out their delay before they join `ready`. */
  delayed = 0;

  readyCount(): number {
    return this.ready.length;
  }

  consumerCount(): number {
    return this.consumers.length;
  }

  inFlight(): number {
    return this.consumers.reduce((sum, consumer) => sum + consumer.inFlight(), 0);
  }

  push(envelope: Envelope): void {
    // Binary search for the first message that comes after this one: (priority, seq) ascending.
    let low = 0;
    let high = this.ready.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const other = this.ready[mid];
      if (other.priority < envelope.priority || (other.priority === envelope.priority && other.seq < envelope.seq))
        low = mid + 1;
      else high = mid;
    }
    this.ready.splice(low, 0, envelope);
    this.dispatch();
  }

  addConsumer(consumer: EmbeddedConsumer): void {
    this.consumers.push(consumer);
    this.dispatch();
  }

  removeConsumer(consumer: EmbeddedConsumer): void {
    const index = this.consumers.indexOf(consumer);
    if (index >= 0) this.consumers.splice(index, 1);
  }

  /** Hands ready messages to consumers with room until either runs out. */
  dispatch(): void {
    while (this.ready.length > 0) {
      const consumer = this.nextWithRoom();
      if (!consumer) return;
      consumer.deliver(this.ready.shift()!);
    }
  }

  private nextWithRoom(): EmbeddedConsumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const consumer = this.consumers[(this.turn + i) % this.consumers.length];
      if (consumer.hasRoom()) {
        this.turn = (this.turn + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return undefined;
  }
}

class EmbeddedConsumer implements Consumer {
  onCancel: () => void = () => undefined;
  private readonly running = new Set<Promise<void>>();
  private active = true;

  constructor(
    private readonly work: WorkQueue,
    private readonly handler: MessageHandler<unknown>,
    private readonly prefetch: number,
    private readonly handBack: (envelope: Envelope) => void,
  ) {}

  hasRoom(): boolean {
    return this.active && this.running.size < this.prefetch;
  }

  inFlight(): number {
    return this.running.size;
  }

  /** Runs the handler on its own copy of the body; counted as in flight until it settles. */
  deliver(envelope: Envelope): void {
    const message: ReceivedMessage<unknown> = {
      body: JSON.parse(envelope.payload) as unknown,
      priority: envelope.priority,
      redelivered: envelope.redelivered,
    };
    // Started on the next microtask so that dispatch() never re-enters itself, and a handler that
    // throws synchronously counts as a rejection.
    const settled: Promise<void> = Promise.resolve()
      .then(() => this.handler(message))
      .then(
        () => undefined,
        () => this.handBack(envelope),
      )
      .finally(() => {
        this.running.delete(settled);
        this.work.dispatch();
      });
    this.running.add(settled);
  }

  async cancel(): Promise<void> {
    if (this.active) {
      this.active = false;
      this.work.removeConsumer(this);
      this.onCancel();
    }
    while (this.running.size > 0) await Promise.all(this.running);
  }
}
