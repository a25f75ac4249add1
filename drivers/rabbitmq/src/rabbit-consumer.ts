/**
 * A consumer on its own channel, with manual acks and `prefetch` handlers at most. It outlives its
 * channel: when the channel or the connection is lost it subscribes again (the broker gives the
 * unacknowledged messages to someone else, with `redelivered` set), until cancel() is called.
 *
 * A classic work queue is one queue with priorities, and the broker sends at most `prefetch`
 * messages, each handled at once. A replicated one (P17) is one queue per priority level: each
 * sends up to `prefetch + 1` (the last level `prefetch`) into a local buffer, and a free handler
 * takes the most urgent waiting message. The extra one is what makes that hold: a level's handlers
 * never take all its credit, so a message of that level waiting on the broker is always sent to
 * us, and is here before a less urgent one is started in its place.
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Consumer, MessageHandler, ReceivedMessage } from '@opco-proxy/core';
import { CLOSE_TIMEOUT_MS, type BrokerConnection, type QueueLogger } from './broker-connection.js';
import type { ConfirmedPublisher } from './confirmed-publisher.js';
import { Pause, withDeadline } from './deadline.js';
import { DELIVER_AT_HEADER, REDELIVERED_HEADER, declareQueue, fromAmqpPriority, type Topology } from './topology.js';

export interface ConsumerSettings {
  /** The work queue's name on the broker (prefix included). */
  queue: string;
  handler: MessageHandler<unknown>;
  prefetch: number;
  redeliveryDelayMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  logger?: QueueLogger;
  topology: Topology;
}

interface Delivery {
  channel: Channel;
  msg: ConsumeMessage;
}

export class RabbitConsumer implements Consumer {
  onCancel: () => void = () => undefined;
  private channel: Channel | undefined;
  private consumerTags: string[] = [];
  /** Per consumed queue, most urgent first: what the broker sent that no handler has started yet. */
  private waiting: Delivery[][] = [];
  /** Channels known to be closed: an ack there would throw, and the broker already took the message back. */
  private readonly closedChannels = new WeakSet<Channel>();
  private readonly running = new Set<Promise<void>>();
  private readonly backoff = new Pause();
  private resubscribing: Promise<void> | undefined;
  private cancelled = false;

  constructor(
    private readonly settings: ConsumerSettings,
    private readonly broker: BrokerConnection,
    private readonly publisher: ConfirmedPublisher,
  ) {}

  /** The first subscription, which the consume() call waits for: it fails when the broker is not there. */
  async start(deadline: number): Promise<void> {
    await withDeadline(
      this.subscribe(deadline),
      deadline,
      () => new Error(`RabbitMQ did not start the consumer of ${this.settings.queue} in time`),
    );
  }

  async cancel(): Promise<void> {
    if (!this.cancelled) {
      this.cancelled = true;
      this.backoff.wake();
      this.onCancel();
    }
    const channel = this.channel;
    // Bounded: on a connection whose peer went silent, no answer comes until heartbeats notice.
    const within = (work: Promise<unknown>) =>
      withDeadline(work, Date.now() + CLOSE_TIMEOUT_MS, () => new Error('timed out')).catch(() => undefined);
    if (channel && !this.closedChannels.has(channel)) {
      // Messages already running finish below; those not started go back with the channel.
      for (const tag of this.consumerTags) await within(channel.cancel(tag));
    }
    this.waiting = [];
    await this.settled();
    // Closing returns anything still unacknowledged to the queue.
    if (channel && !this.closedChannels.has(channel)) await within(channel.close());
    this.channel = undefined;
  }

  private async subscribe(deadline = Infinity): Promise<void> {
    const model = await this.broker.connection(deadline);
    const channel = await model.createChannel();
    channel.on('error', (err: Error) =>
      this.settings.logger?.warn({ queue: this.settings.queue, err: err.message }, 'RabbitMQ consumer channel error'),
    );
    channel.on('close', () => this.lost(channel));
    const { topology, prefetch } = this.settings;
    const queues = topology.consumed(this.settings.queue);
    try {
      for (const queue of queues) await declareQueue(channel, queue, topology.workQueueOptions());
      if (this.cancelled) throw new Error('cancelled');
      this.channel = channel;
      this.waiting = queues.map(() => []);
      this.consumerTags = [];
      for (const [index, queue] of queues.entries()) {
        // Per consumer (quorum queues refuse a channel-wide prefetch); see the top of the file for the + 1.
        await channel.prefetch(index < queues.length - 1 ? prefetch + 1 : prefetch);
        const { consumerTag } = await channel.consume(
          queue,
          (msg) => (msg ? this.arrived(channel, index, msg) : this.cancelledByBroker(channel)),
          { noAck: false },
        );
        this.consumerTags.push(consumerTag);
      }
      // cancel() came while we were subscribing (start() timed out, or close()): do not stay on.
      if (this.cancelled) throw new Error('cancelled');
    } catch (err) {
      if (this.channel === channel) this.channel = undefined;
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  /** How many messages the broker sent that wait for a free handler (tests watch it). */
  get waitingMessages(): number {
    return this.waiting.reduce((sum, queue) => sum + queue.length, 0);
  }

  private arrived(channel: Channel, index: number, msg: ConsumeMessage): void {
    if (this.channel !== channel) return; // a lost channel's messages are the broker's again
    this.waiting[index]?.push({ channel, msg });
    this.pump();
  }

  /** Starts the most urgent waiting messages while fewer than `prefetch` handlers run. */
  private pump(): void {
    while (!this.cancelled && this.running.size < this.settings.prefetch) {
      const next = this.waiting.find((queue) => queue.length > 0)?.shift();
      if (!next) return;
      this.deliver(next.channel, next.msg);
    }
  }

  private finished(done: Promise<void>): void {
    this.running.delete(done);
    this.pump();
  }

  private deliver(channel: Channel, msg: ConsumeMessage): void {
    let body: unknown;
    try {
      body = JSON.parse(msg.content.toString('utf8'));
    } catch {
      // Not ours (every message we publish is JSON); requeueing would loop on it forever.
      this.settings.logger?.error({ queue: this.settings.queue }, 'dropped a message whose body is not JSON');
      this.acknowledge(channel, () => channel.nack(msg, false, false));
      return;
    }
    const headers = msg.properties.headers ?? {};
    const message: ReceivedMessage<unknown> = {
      body,
      priority: fromAmqpPriority(msg.properties.priority),
      redelivered: msg.fields.redelivered || headers[REDELIVERED_HEADER] === true,
    };
    const deliverAt = Number(headers[DELIVER_AT_HEADER]);
    if (Number.isFinite(deliverAt) && deliverAt > Date.now()) {
      // Delayed longer than the longest delay queue: wait out the rest before the handler sees it.
      const rest = this.publisher.publish({
        queue: this.settings.queue,
        content: msg.content,
        priority: message.priority,
        delayMs: deliverAt - Date.now(),
        redelivered: message.redelivered,
      });
      const done: Promise<void> = rest
        .then(
          () => this.acknowledge(channel, () => channel.ack(msg)),
          () => this.acknowledge(channel, () => channel.nack(msg, false, true)),
        )
        .finally(() => this.finished(done));
      this.running.add(done);
      return;
    }
    const done: Promise<void> = Promise.resolve()
      .then(() => this.settings.handler(message))
      .then(
        () => this.acknowledge(channel, () => channel.ack(msg)),
        () => this.handBack(channel, msg, message.priority),
      )
      .finally(() => this.finished(done));
    this.running.add(done);
  }

  /**
   * A rejected message goes to the delay queue (marked redelivered) and only then is the original
   * acknowledged, so it is always held somewhere. If that publish fails, the broker gets it back
   * at once instead (nack with requeue): sooner than asked, but not lost.
   */
  private async handBack(channel: Channel, msg: ConsumeMessage, priority: number): Promise<void> {
    if (this.closedChannels.has(channel)) return; // the broker took it back already
    try {
      await this.publisher.publish({
        queue: this.settings.queue,
        content: msg.content,
        priority,
        delayMs: this.settings.redeliveryDelayMs,
        redelivered: true,
      });
    } catch (err) {
      this.settings.logger?.warn(
        { queue: this.settings.queue, err: (err as Error).message },
        'could not delay a rejected message; requeueing it now',
      );
      this.acknowledge(channel, () => channel.nack(msg, false, true));
      return;
    }
    this.acknowledge(channel, () => channel.ack(msg));
  }

  /** An ack or nack for a message of a lost channel is moot (the broker requeued it) and must not throw. */
  private acknowledge(channel: Channel, send: () => void): void {
    if (this.closedChannels.has(channel)) return;
    try {
      send();
    } catch {
      // closed between the check and the call: same as above
    }
  }

  private lost(channel: Channel): void {
    this.closedChannels.add(channel);
    this.dropWaiting(channel);
    if (this.channel !== channel) return;
    this.channel = undefined;
    if (this.cancelled) return;
    this.settings.logger?.warn({ queue: this.settings.queue }, 'RabbitMQ consumer channel lost; subscribing again');
    this.resubscribe();
  }

  /** The queue was deleted or the broker cancelled us: subscribe again, which declares the queue anew. */
  private cancelledByBroker(channel: Channel): void {
    if (this.channel !== channel || this.cancelled) return;
    this.channel = undefined;
    this.dropWaiting(channel); // closing the channel gives them back
    this.settings.logger?.warn({ queue: this.settings.queue }, 'RabbitMQ cancelled the consumer; subscribing again');
    this.resubscribe(channel);
  }

  private resubscribe(previous?: Channel): void {
    if (this.resubscribing || this.cancelled) return;
    this.resubscribing = (async () => {
      // Handlers still running on the lost channel count against the prefetch: waiting for them
      // keeps this consumer's concurrency at `prefetch` (what the worker sized its upstream use on).
      await this.settled();
      if (previous && !this.closedChannels.has(previous)) await previous.close().catch(() => undefined);
      let delay = this.settings.reconnect.initialDelayMs;
      while (!this.cancelled && this.channel === undefined) {
        try {
          await this.subscribe();
          this.settings.logger?.info({ queue: this.settings.queue }, 'RabbitMQ consumer subscribed again');
        } catch (err) {
          if (this.cancelled) return;
          this.settings.logger?.warn(
            { queue: this.settings.queue, err: (err as Error).message, retryInMs: delay },
            'RabbitMQ consumer could not subscribe again',
          );
          await this.backoff.for(delay);
          delay = Math.min(delay * 2, this.settings.reconnect.maxDelayMs);
        }
      }
    })().finally(() => {
      this.resubscribing = undefined;
      // Lost again while this round was finishing.
      if (!this.cancelled && this.channel === undefined) this.resubscribe();
    });
  }

  private dropWaiting(channel: Channel): void {
    this.waiting = this.waiting.map((queue) => queue.filter((delivery) => delivery.channel !== channel));
  }

  private async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
