/**
 * Publishing that resolves only once the broker holds the message: persistent messages on a
 * confirm channel, `mandatory` so that a message no queue takes is reported instead of silently
 * dropped, and every queue it targets declared first on this connection.
 */
import { randomUUID } from 'node:crypto';
import type { Channel, ConfirmChannel, ChannelModel, Message } from 'amqplib';
import type { BrokerConnection } from './broker-connection.js';
import { withDeadline } from './deadline.js';
import {
  DELAY_QUEUE_REDECLARE_MS,
  DELIVER_AT_HEADER,
  REDELIVERED_HEADER,
  delayBucket,
  delayQueueName,
  declareQueue,
  toAmqpPriority,
  type Topology,
} from './topology.js';

/** Between the sends of a message the broker nacked or did not confirm: a quorum queue's election takes seconds. */
const RETRY_PAUSE_MS = 50;
const RETRY_PAUSE_MAX_MS = 1000;

/** A failed publish, and whether another try may succeed (ConfirmedPublisher.write). */
type Unconfirmed = Error & { retry?: 'lost' | 'nacked' };

export interface OutgoingMessage {
  /** The work queue's name on the broker (prefix included); the topology says which queue holds the message. */
  queue: string;
  content: Buffer;
  /** SPEC priority 1..10. */
  priority: number;
  delayMs: number;
  redelivered: boolean;
}

/** How far a publish got, so that a publish that runs out of time can say why. */
interface SendProgress {
  /** False while it waits for the broker connection (reconnecting). */
  connected: boolean;
}

/** A channel of one connection generation, so that a new connection gets new channels. */
interface Held<C> {
  generation: number;
  channel: Promise<C>;
}

export class ConfirmedPublisher {
  private confirm: Held<ConfirmChannel> | undefined;
  /** Declarations run on their own channel: a refused one (different arguments) closes it, not the confirm channel. */
  private declaring: Held<Channel> | undefined;
  /** Queue name -> when it was declared, for the generation in `declaredIn`. */
  private declared = new Map<string, number>();
  private declaredIn = 0;
  /** Message ids the broker returned as unroutable; a return always precedes the confirm. */
  private readonly returned = new Set<string>();

  constructor(
    private readonly broker: BrokerConnection,
    private readonly timeoutMs: number,
    private readonly topology: Topology,
  ) {}

  /** Resolves on the broker's confirm; rejects on a nack, a return, or past `timeoutMs`. */
  publish(message: OutgoingMessage): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    const progress: SendProgress = { connected: false };
    // The wait for a connection has its own timer on the same deadline, and either may fire
    // first (the clock can tick between the two): say what was being waited for, whichever wins.
    return withDeadline(this.send(message, deadline, progress), deadline, () =>
      progress.connected
        ? new Error(`RabbitMQ did not confirm the message within ${this.timeoutMs} ms`)
        : new Error(
            `RabbitMQ at ${this.broker.where} is unreachable (reconnecting); the message was not sent within ${this.timeoutMs} ms`,
          ),
    );
  }

  private async send(message: OutgoingMessage, deadline: number, progress: SendProgress): Promise<void> {
    const bucket = message.delayMs > 0 ? delayBucket(message.delayMs) : 0;
    const queue = this.topology.queueFor(message.queue, message.priority);
    const target = bucket > 0 ? delayQueueName(queue, bucket) : queue;
    const headers: Record<string, unknown> = message.redelivered ? { [REDELIVERED_HEADER]: true } : {};
    if (message.delayMs > bucket) headers[DELIVER_AT_HEADER] = Date.now() + message.delayMs;
    let pause = RETRY_PAUSE_MS;
    for (;;) {
      progress.connected = false;
      const model = await this.broker.connection(deadline);
      progress.connected = true;
      const generation = this.broker.generation;
      await this.declare(model, generation, queue, bucket);
      const channel = await this.confirmChannel(model, generation);
      const held = this.confirm;
      let confirmed: Promise<void>;
      try {
        confirmed = this.write(channel, target, message, headers);
      } catch (err) {
        // The channel closed before we wrote to it: nothing was sent, so another channel may try.
        if (this.confirm?.generation === generation) this.confirm = undefined;
        if (Date.now() >= deadline) throw err;
        continue;
      }
      try {
        return await confirmed;
      } catch (err) {
        const retry = (err as Unconfirmed).retry;
        if (!retry || Date.now() + pause >= deadline) throw err;
        if (retry === 'nacked') this.retire(held, channel);
        await new Promise((resolve) => setTimeout(resolve, pause));
        if (Date.now() >= deadline) throw err; // the caller has heard of the failure: send nothing more
        pause = Math.min(pause * 2, RETRY_PAUSE_MAX_MS);
      }
    }
  }

  /**
   * Publishes once; the promise settles on the broker's answer. Throws at once (nothing sent) when
   * the channel is already closed. Rejects with `retry` set when sending again may succeed:
   * - `lost`: the connection (or the channel) went before the confirm, as amqplib reports with
   *   'channel closed'. The broker may hold the message or not; sending it on the next connection
   *   keeps the promise that publish() resolves only once it is held, at worst as a duplicate,
   *   which at-least-once consumers take anyway.
   * - `nacked`: the broker did not take it (a quorum queue refuses publishes while it elects a
   *   leader, after its leader's node died).
   */
  private write(
    channel: ConfirmChannel,
    target: string,
    message: OutgoingMessage,
    headers: Record<string, unknown>,
  ): Promise<void> {
    const messageId = randomUUID();
    let settle!: (err: Error | null) => void;
    const confirmed = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    const options = {
      persistent: true,
      mandatory: true,
      contentType: 'application/json',
      priority: toAmqpPriority(message.priority),
      messageId,
      headers,
    };
    channel.publish('', target, message.content, options, (err: unknown) => {
      if (this.returned.delete(messageId)) {
        this.declared.delete(target); // deleted behind our back: declare it again next time
        settle(new Error(`RabbitMQ has no queue ${target} (deleted?); the message was not accepted`));
      } else if (err) {
        const reason = err instanceof Error ? err.message : JSON.stringify(err);
        const retry = reason === 'channel closed' ? 'lost' : reason === 'message nacked' ? 'nacked' : undefined;
        settle(Object.assign(new Error(`RabbitMQ did not accept the message: ${reason}`), { retry }));
      } else {
        settle(null);
      }
    });
    return confirmed;
  }

  private async declare(model: ChannelModel, generation: number, queue: string, bucket: number): Promise<void> {
    if (this.declaredIn !== generation) {
      // A new connection may face a broker that lost non-durable state, or another broker.
      this.declared.clear();
      this.declaredIn = generation;
    }
    const now = Date.now();
    if (!this.declared.has(queue)) {
      await declareQueue(await this.declaringChannel(model, generation), queue, this.topology.workQueueOptions());
      this.declared.set(queue, now);
    }
    if (bucket > 0) {
      const name = delayQueueName(queue, bucket);
      const at = this.declared.get(name);
      // Declaring again renews the delay queue's x-expires lease, which publishing does not.
      if (at === undefined || now - at > DELAY_QUEUE_REDECLARE_MS) {
        await declareQueue(
          await this.declaringChannel(model, generation),
          name,
          this.topology.delayQueueOptions(queue, bucket),
        );
        this.declared.set(name, now);
      }
    }
  }

  /**
   * The next publishes take a new channel. A channel keeps its own view of where each quorum
   * queue's leader is, and on RabbitMQ 3.10 one that published while the leader's node died goes
   * on nacking after the election (a new channel is served at once). This one closes once the
   * messages it carries are confirmed or refused.
   */
  private retire(held: Held<ConfirmChannel> | undefined, channel: ConfirmChannel): void {
    if (!held || this.confirm !== held) return;
    this.confirm = undefined;
    void channel
      .waitForConfirms()
      .catch(() => undefined)
      .finally(() => channel.close().catch(() => undefined));
  }

  private confirmChannel(model: ChannelModel, generation: number): Promise<ConfirmChannel> {
    if (this.confirm?.generation !== generation) {
      const held: Held<ConfirmChannel> = { generation, channel: model.createConfirmChannel() };
      this.confirm = held;
      held.channel.then(
        (channel) => {
          channel.on('error', () => undefined); // 'close' follows
          channel.on('close', () => {
            if (this.confirm === held) this.confirm = undefined;
          });
          channel.on('return', (returned: Message) => {
            const id = returned.properties.messageId as string | undefined;
            if (id) this.returned.add(id);
          });
        },
        () => {
          if (this.confirm === held) this.confirm = undefined;
        },
      );
    }
    return this.confirm.channel;
  }

  private declaringChannel(model: ChannelModel, generation: number): Promise<Channel> {
    if (this.declaring?.generation !== generation) {
      const held: Held<Channel> = { generation, channel: model.createChannel() };
      this.declaring = held;
      const forget = () => {
        if (this.declaring === held) this.declaring = undefined;
      };
      held.channel.then((channel) => {
        channel.on('error', () => undefined); // a refused declaration: the publish that asked rejects with it
        channel.on('close', forget);
      }, forget);
    }
    return this.declaring.channel;
  }
}
