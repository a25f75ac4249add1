/**
 * One AMQP connection that comes back by itself: when it is lost ('close' after an 'error', a
 * broker restart, a network cut), it is dialled again with exponential backoff until it works or
 * close() is called. Users ask for `connection(deadline)` each time they need one and build their
 * channels on it; what they built on a lost connection is theirs to rebuild (see `generation`).
 *
 * With several URLs (the nodes of a cluster), each dialling round tries them in turn, starting
 * with the one after the node last used, so that a lost node is tried last.
 */
import amqp, { type ChannelModel } from 'amqplib';
import { Pause, withDeadline } from './deadline.js';

/** pino-like; messages never carry the URL's password. */
export interface QueueLogger {
  info(data: object, message: string): void;
  warn(data: object, message: string): void;
  error(data: object, message: string): void;
}

export interface BrokerConnectionOptions {
  /** One or more nodes of one broker; at least one. */
  urls: readonly string[];
  /** What this connection is for, in log lines ("publishing", "consuming"). */
  role: string;
  connectTimeoutMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  logger?: QueueLogger;
}

/**
 * A dead peer (broker frozen, cable cut) is noticed after two missed heartbeats; RabbitMQ offers
 * 60 s, which would leave consumers idle for two minutes. An explicit `heartbeat` in the URL wins.
 */
const HEARTBEAT_S = 10;

const PING_TIMEOUT_MS = 3000;
/** Past this, close() stops waiting for the broker's close-ok and drops the socket. */
export const CLOSE_TIMEOUT_MS = 2000;

export class BrokerConnection {
  /** Bumped at each (re)connection: channels and declarations belong to one generation. */
  generation = 0;
  private current: ChannelModel | undefined;
  private readonly waiters = new Set<{
    resolve: (model: ChannelModel) => void;
    reject: (err: Error) => void;
    timer?: NodeJS.Timeout;
  }>();
  private readonly backoff = new Pause();
  private closing = false;
  /** The node in use (index in `urls`), or the last one tried. */
  private node = 0;

  private constructor(private readonly options: BrokerConnectionOptions) {}

  /** Connects once; rejects (without retrying) when the broker cannot be reached in time. */
  static async open(options: BrokerConnectionOptions): Promise<BrokerConnection> {
    const broker = new BrokerConnection(options);
    broker.adopt(await broker.dial(0));
    return broker;
  }

  /** The node in use, or every node while none is; without passwords, for messages that end up in logs. */
  get where(): string {
    const { urls } = this.options;
    return this.current || urls.length === 1 ? redacted(urls[this.node]) : urls.map(redacted).join(', ');
  }

  get isOpen(): boolean {
    return this.current !== undefined;
  }

  /** The open connection, or the next one if it is being re-established, until `deadline` (epoch ms). */
  connection(deadline = Infinity): Promise<ChannelModel> {
    if (this.closing) return Promise.reject(new Error('the RabbitMQ queue is closed'));
    if (this.current) return Promise.resolve(this.current);
    return new Promise((resolve, reject) => {
      const waiter: { resolve: typeof resolve; reject: typeof reject; timer?: NodeJS.Timeout } = { resolve, reject };
      if (deadline !== Infinity) {
        waiter.timer = setTimeout(
          () => {
            this.waiters.delete(waiter);
            reject(new Error(`RabbitMQ at ${this.where} is unreachable (reconnecting)`));
          },
          Math.max(0, deadline - Date.now()),
        );
      }
      this.waiters.add(waiter);
    });
  }

  /** A round trip to the broker (open and close a channel) within a few seconds. */
  async ping(): Promise<void> {
    const model = this.current;
    if (!model) throw new Error(`RabbitMQ at ${this.where} is unreachable (reconnecting)`);
    const deadline = Date.now() + PING_TIMEOUT_MS;
    const failure = () => new Error(`RabbitMQ at ${this.where} did not answer within ${PING_TIMEOUT_MS} ms`);
    const opening = model.createChannel();
    try {
      const channel = await withDeadline(opening, deadline, failure);
      channel.on('error', () => undefined); // an unhandled 'error' event would throw
      await withDeadline(channel.close(), deadline, failure);
    } catch (err) {
      opening.then(
        (late) => late.close().catch(() => undefined),
        () => undefined,
      );
      throw err;
    }
  }

  /** Stops reconnecting, fails whoever waits for a connection, closes the current one. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.backoff.wake();
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(new Error('the RabbitMQ queue is closed'));
    }
    this.waiters.clear();
    const model = this.current;
    this.current = undefined;
    if (model) await closeWithin(model, CLOSE_TIMEOUT_MS);
  }

  /** One round over the nodes from `first`: the first that answers, or every node's failure. */
  private async dial(first: number): Promise<ChannelModel> {
    const { urls } = this.options;
    const failures: Error[] = [];
    for (let i = 0; i < urls.length && !this.closing; i++) {
      const node = (first + i) % urls.length;
      try {
        const model = await this.dialNode(urls[node]);
        this.node = node;
        return model;
      } catch (err) {
        failures.push(err as Error);
        if (i < urls.length - 1)
          this.options.logger?.warn(
            { role: this.options.role, err: (err as Error).message },
            'RabbitMQ node unreachable; trying the next one',
          );
      }
    }
    if (failures.length === 1) throw failures[0];
    throw new Error(failures.map((err) => err.message).join('; ') || 'the RabbitMQ queue is closed', {
      cause: failures[0],
    });
  }

  private async dialNode(url: string): Promise<ChannelModel> {
    const { connectTimeoutMs } = this.options;
    // amqplib's own `timeout` covers the TCP connect and the AMQP handshake; the race is a second
    // guard for a broker that answers the handshake and then nothing else.
    const attempt = amqp.connect(withHeartbeat(url), { timeout: connectTimeoutMs });
    try {
      return await withDeadline(
        attempt,
        Date.now() + connectTimeoutMs + 500,
        () => new Error(`no answer within ${connectTimeoutMs} ms`),
      );
    } catch (err) {
      attempt.then(
        (late) => late.close().catch(() => undefined),
        () => undefined,
      );
      throw new Error(`cannot connect to RabbitMQ at ${redacted(url)}: ${scrub((err as Error).message)}`, {
        cause: err,
      });
    }
  }

  private adopt(model: ChannelModel): void {
    this.generation++;
    const { role } = this.options;
    // Without an 'error' listener an EventEmitter throws; the 'close' that follows does the work.
    model.on('error', (err: Error) =>
      this.options.logger?.warn({ role, err: scrub(err.message) }, 'RabbitMQ connection error'),
    );
    model.on('close', () => this.lost(model));
    // A resource alarm (memory, disk) stops the broker reading from publishing connections.
    model.on('blocked', (reason: string) =>
      this.options.logger?.warn({ role, reason }, 'RabbitMQ blocked the connection'),
    );
    model.on('unblocked', () => this.options.logger?.info({ role }, 'RabbitMQ unblocked the connection'));
    this.current = model;
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(model);
    }
    this.waiters.clear();
  }

  private lost(model: ChannelModel): void {
    if (this.current !== model) return;
    this.current = undefined;
    if (this.closing) return;
    this.options.logger?.warn(
      { role: this.options.role, broker: redacted(this.options.urls[this.node]) },
      'lost the connection to RabbitMQ; reconnecting',
    );
    void this.reconnect();
  }

  private async reconnect(): Promise<void> {
    const { initialDelayMs, maxDelayMs } = this.options.reconnect;
    let delay = initialDelayMs;
    while (!this.closing) {
      await this.backoff.for(delay);
      if (this.closing) return;
      try {
        const model = await this.dial(this.node + 1);
        if (this.closing) {
          await model.close().catch(() => undefined);
          return;
        }
        this.adopt(model);
        this.options.logger?.info({ role: this.options.role, broker: this.where }, 'reconnected to RabbitMQ');
        return;
      } catch (err) {
        this.options.logger?.warn(
          { role: this.options.role, err: (err as Error).message, retryInMs: delay },
          'RabbitMQ reconnection failed',
        );
        delay = Math.min(delay * 2, maxDelayMs);
      }
    }
  }
}

/**
 * amqplib waits for close-ok forever when the socket dies during the close handshake (it then
 * ignores the socket's end), so a close on a connection that was just cut would hang.
 */
async function closeWithin(model: ChannelModel, ms: number): Promise<void> {
  try {
    await withDeadline(model.close(), Date.now() + ms, () => new Error('close timed out'));
  } catch {
    (model.connection as unknown as { stream?: { destroy(): void } }).stream?.destroy();
  }
}

function withHeartbeat(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has('heartbeat')) parsed.searchParams.set('heartbeat', String(HEARTBEAT_S));
    return parsed.href;
  } catch {
    return url; // amqplib reports what is wrong with it
  }
}

/** The URL without its password, for messages that end up in logs. */
export function redacted(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_, credentials: string) => `//${credentials.split(':')[0]}:***@`);
}

/** Error texts from the network layer may quote a URL; never let a password through. */
function scrub(message: string): string {
  return redacted(message);
}
