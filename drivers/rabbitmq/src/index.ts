/**
 * The Queue port on RabbitMQ through amqplib (D3 `queue: {type: "rabbitmq", url, prefix?, replicated?}`):
 * durable priority queues (or quorum queues, one per priority level: P17), per-delay queues for
 * delayed messages, publisher confirms, manual acks with a bounded prefetch, and automatic
 * reconnection, to another node when `url` lists several. README.md describes the topology.
 */
import {
  ConfigError,
  QueueUnavailableError,
  type QueueDriver,
  type Consumer,
  type ConsumeOptions,
  type MessageHandler,
  type PublishOptions,
  type Queue,
  type QueueDepth,
} from '@opco-proxy/core';
import { BrokerConnection, type QueueLogger } from './broker-connection.js';
import { ConfirmedPublisher } from './confirmed-publisher.js';
import { checkConsume, checkPublish } from '@opco-proxy/core/driver-kit';
import { RabbitConsumer } from './rabbit-consumer.js';
import { queueDepth } from './queue-depth.js';
import { Topology } from './topology.js';
import type { RabbitQueueConfig } from './generated/config.js';

export type { QueueLogger };

export interface RabbitQueueOptions {
  /**
   * `amqp://` or `amqps://`; a `heartbeat` in the query string overrides our 10 s. Several: the
   * nodes of one cluster, the first that answers is used and the others take over when it goes.
   */
  url: string | readonly string[];
  /** Broker queue names become `<prefix>.<queue>`, so several deployments can share one broker. */
  prefix?: string;
  /** Quorum queues, one per priority level, for a cluster (P17); default false (classic queues). */
  replicated?: boolean;
  /** How long publish() may wait for a connection and the broker's confirm; default 5000. */
  publishTimeoutMs?: number;
  /** Backoff between reconnection attempts, doubling from the first to the second; default 500 to 10000. */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  logger?: QueueLogger;
}

const DEFAULT_PUBLISH_TIMEOUT_MS = 5000;
/** An unreachable broker must fail start-up, consume() and /ready in seconds, not hang them. */
const CONNECT_TIMEOUT_MS = 5000;
const DEFAULT_RECONNECT = { initialDelayMs: 500, maxDelayMs: 10_000 };

export async function createQueue(options: RabbitQueueOptions): Promise<Queue> {
  const urls = typeof options.url === 'string' ? [options.url] : [...options.url];
  if (urls.length === 0) throw new ConfigError('invalid configuration: queue.url: give at least one URL');
  const settings = {
    urls,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    reconnect: options.reconnect ?? DEFAULT_RECONNECT,
    logger: options.logger,
  };
  const publishing = await BrokerConnection.open({ ...settings, role: 'publishing' });
  const topology = new Topology(options.replicated ?? false);
  return new RabbitQueue(
    publishing,
    settings,
    topology,
    options.prefix,
    options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS,
  );
}

/** The driver of `queue: {type: "rabbitmq", url, prefix?, replicated?}` (D3). */
export const queueDriver: QueueDriver = {
  type: 'rabbitmq',
  open(section, context) {
    if (section.type !== 'rabbitmq')
      throw new ConfigError(
        `invalid configuration: queue.type: the rabbitmq driver cannot open a "${section.type}" queue`,
      );
    const { url, prefix, replicated } = section as typeof section & RabbitQueueConfig; // validated by config.schema.json
    return createQueue({ url, prefix, replicated, logger: context.log });
  },
};

export default { createQueue, queueDriver };

interface ConnectionSettings {
  urls: readonly string[];
  connectTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  logger?: QueueLogger;
}

class RabbitQueue implements Queue {
  readonly kind = 'rabbitmq';
  readonly durable = true;
  private readonly publisher: ConfirmedPublisher;
  /**
   * Consumers get their own connection, opened on the first consume(): under a resource alarm the
   * broker stops reading from publishing connections, and consumers sharing one could not ack,
   * so the queues that would relieve the alarm would not drain.
   */
  private consuming: Promise<BrokerConnection> | undefined;
  private readonly consumers = new Set<RabbitConsumer>();
  private closed = false;

  constructor(
    private readonly publishing: BrokerConnection,
    private readonly settings: ConnectionSettings,
    private readonly topology: Topology,
    private readonly prefix: string | undefined,
    publishTimeoutMs: number,
  ) {
    this.publisher = new ConfirmedPublisher(publishing, publishTimeoutMs, topology);
  }

  async publish<T>(queue: string, body: T, options?: PublishOptions): Promise<void> {
    this.assertOpen();
    const { payload, priority, delayMs } = checkPublish(queue, body, options);
    try {
      await this.publisher.publish({
        queue: this.brokerName(queue),
        content: Buffer.from(payload),
        priority,
        delayMs,
        redelivered: false,
      });
    } catch (err) {
      throw new QueueUnavailableError((err as Error).message, { cause: err });
    }
  }

  async consume<T>(queue: string, handler: MessageHandler<T>, options?: ConsumeOptions): Promise<Consumer> {
    this.assertOpen();
    const { prefetch, redeliveryDelayMs } = checkConsume(queue, options);
    const broker = await this.consumingConnection();
    this.assertOpen();
    const consumer = new RabbitConsumer(
      {
        queue: this.brokerName(queue),
        handler: handler as MessageHandler<unknown>,
        prefetch,
        redeliveryDelayMs,
        reconnect: this.settings.reconnect,
        logger: this.settings.logger,
        topology: this.topology,
      },
      broker,
      this.publisher,
    );
    this.consumers.add(consumer);
    consumer.onCancel = () => this.consumers.delete(consumer);
    try {
      await consumer.start(Date.now() + this.settings.connectTimeoutMs);
    } catch (err) {
      await consumer.cancel();
      throw err;
    }
    return consumer;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.publishing.ping();
    // A consuming connection that is down means workers are idle: not ready either.
    if (this.consuming) await (await this.consuming).ping();
  }

  async depth(queue: string): Promise<QueueDepth> {
    this.assertOpen();
    try {
      const model = await this.publishing.connection(Date.now() + this.settings.connectTimeoutMs);
      return await queueDepth(model, queue, this.brokerName(queue), this.topology);
    } catch (err) {
      throw new QueueUnavailableError((err as Error).message, { cause: err });
    }
  }

  /** Cancels the consumers (waiting for their handlers), then closes both connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.cancel()));
    // Consumers are done before the publishing side closes: a rejected message is republished by it.
    const consuming = await this.consuming?.catch(() => undefined);
    await Promise.all([consuming?.close(), this.publishing.close()]);
  }

  private consumingConnection(): Promise<BrokerConnection> {
    if (!this.consuming) {
      const opening = BrokerConnection.open({ ...this.settings, role: 'consuming' });
      this.consuming = opening;
      // A failed first attempt is not remembered: the next consume() tries again.
      opening.catch(() => {
        if (this.consuming === opening) this.consuming = undefined;
      });
    }
    return this.consuming;
  }

  private brokerName(queue: string): string {
    return this.prefix ? `${this.prefix}.${queue}` : queue;
  }

  private assertOpen(): void {
    if (this.closed) throw new QueueUnavailableError('the RabbitMQ queue is closed');
  }
}
