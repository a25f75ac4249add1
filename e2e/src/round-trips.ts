/**
 * Counting what a job costs the backends (issue 11, point 4): every command the MongoDB driver
 * sends (its command monitoring, `commandStarted`), every message published and every message
 * settled (acked or handed back) on the real RabbitMQ queue. Counted, never timed.
 */
import { MongoClient } from 'mongodb';
import {
  tenantHash,
  type Consumer,
  type ConsumeOptions,
  type MessageHandler,
  type PublishOptions,
  type Queue,
  type Store,
} from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { createStore } from '@opco-proxy/driver-mongodb';
import { createQueue } from '@opco-proxy/driver-rabbitmq';
import { realBackends } from './backends.js';
import { eventually } from './eventually.js';
import { KEY_A, startService, type Service } from './harness.js';
import { startReceiver } from './receiver.js';
import { dossierBody } from './jobs-client.js';

/** Commands of the driver's own housekeeping, not round trips of the store's work. */
const HOUSEKEEPING = new Set(['hello', 'isMaster', 'ismaster', 'buildInfo', 'ping', 'endSessions', 'killCursors']);

export class RoundTrips {
  /** `commandName collection` → count, e.g. `findAndModify jobs`. */
  readonly commands = new Map<string, number>();
  published = 0;
  settled = 0;

  noteCommand(name: string, collection: unknown): void {
    if (HOUSEKEEPING.has(name)) return;
    const key = typeof collection === 'string' ? `${name} ${collection}` : name;
    this.commands.set(key, (this.commands.get(key) ?? 0) + 1);
  }

  get storeCommands(): number {
    let total = 0;
    for (const count of this.commands.values()) total += count;
    return total;
  }

  get queueOperations(): number {
    return this.published + this.settled;
  }

  reset(): void {
    this.commands.clear();
    this.published = 0;
    this.settled = 0;
  }

  snapshot(): { store: number; queue: number; published: number; settled: number; commands: Record<string, number> } {
    return {
      store: this.storeCommands,
      queue: this.queueOperations,
      published: this.published,
      settled: this.settled,
      commands: Object.fromEntries([...this.commands].sort()),
    };
  }
}

export interface CountedBackends {
  store: Store;
  queue: Queue;
  counts: RoundTrips;
  database: string;
  /** A client of its own (not counted), to watch the database without adding to the counts. */
  observer: MongoClient;
  close(): Promise<void>;
}

/**
 * A fresh database and queue prefix on MONGODB_URL and RABBITMQ_URL, every operation counted.
 * `atomicity: 'server'` counts what MongoDB gets; left out, FerretDB gets its lock workaround.
 */
export async function countedBackends(
  label: string,
  options: { atomicity?: 'server' | 'lock' } = {},
): Promise<CountedBackends> {
  const { store: storeConfig, queue: queueConfig } = realBackends(label) as unknown as {
    store: { url: string; database: string };
    queue: { url: string; prefix: string };
  };
  const counts = new RoundTrips();
  const store = await createStore({
    url: storeConfig.url,
    database: storeConfig.database,
    atomicity: options.atomicity,
    onCommand: (event) => counts.noteCommand(event.commandName, event.command[event.commandName]),
  });
  const queue = countingQueue(await createQueue({ url: queueConfig.url, prefix: queueConfig.prefix }), counts);
  const observer = await MongoClient.connect(storeConfig.url);
  return {
    store,
    queue,
    counts,
    database: storeConfig.database,
    observer,
    async close() {
      await queue.close().catch(() => undefined);
      await store.close().catch(() => undefined);
      await observer
        .db(storeConfig.database)
        .dropDatabase()
        .catch(() => undefined);
      await observer.close();
    },
  };
}

/** The real queue, its publishes and settled messages counted. */
export function countingQueue(queue: Queue, counts: RoundTrips): Queue {
  return {
    kind: queue.kind,
    durable: queue.durable,
    publish<T>(name: string, body: T, options?: PublishOptions): Promise<void> {
      counts.published += 1;
      return queue.publish(name, body, options);
    },
    consume<T>(name: string, handler: MessageHandler<T>, options?: ConsumeOptions): Promise<Consumer> {
      return queue.consume<T>(name, (message) => handler(message).finally(() => void (counts.settled += 1)), options);
    },
    depth: (name) => queue.depth(name),
    ping: () => queue.ping(),
    close: () => queue.close(),
  };
}

export interface PerJob {
  jobs: number;
  /** Store commands per job, in all and by `command collection`. */
  store: number;
  queue: number;
  published: number;
  settled: number;
  commands: Record<string, number>;
}

/**
 * Submits `count` single-step jobs (POST /sandbox/dossiers, no files, no Idempotency-Key, no
 * webhook) one after the other and waits until each has ended, its event is out and its message
 * is settled: after this the service has nothing of these jobs left to do.
 */
export async function completeJobs(service: Service, backends: CountedBackends, count: number): Promise<string[]> {
  const records = backends.observer.db(backends.database).collection('jobs');
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const reply = await service.request('POST', '/sandbox/dossiers', { body: dossierBody() });
    if (reply.status !== 202) throw new Error(`POST /sandbox/dossiers answered ${reply.status}: ${reply.text}`);
    ids.push(reply.body.jobId);
  }
  // Ended and its event emitted: the last write of a job.
  await eventually(
    async () =>
      (await records.countDocuments({ _id: { $in: ids } as never, status: 'completed', notified: true })) === count,
    `${count} jobs completed and notified`,
    60_000,
  );
  // The message is settled once its handler returns, just after that write: count it too.
  await eventually(() => backends.counts.settled >= backends.counts.published, 'every message settled', 60_000);
  return ids;
}

/**
 * Runs `jobs` single-step jobs (completeJobs) on `backends`, after two to warm up (budget slots,
 * indexes, token), and returns what each cost. The clock is frozen: no sweep, poll or lease
 * renewal runs meanwhile, so the counts are the job's own.
 */
export async function jobRoundTrips(backends: CountedBackends, jobs = 10): Promise<PerJob> {
  const service = await startService({
    store: backends.store,
    queue: backends.queue,
    clock: new TestClock({ frozen: true }),
  });
  try {
    await completeJobs(service, backends, 2);
    backends.counts.reset();
    await completeJobs(service, backends, jobs);
    const counts = backends.counts.snapshot();
    const per = (n: number) => n / jobs;
    return {
      jobs,
      store: per(counts.store),
      queue: per(counts.queue),
      published: per(counts.published),
      settled: per(counts.settled),
      commands: Object.fromEntries(Object.entries(counts.commands).map(([name, n]) => [name, per(n)])),
    };
  } finally {
    await service.close();
  }
}

export interface PerDelivery {
  deliveries: number;
  /** Store commands per delivery, in all and by `command collection`. */
  store: number;
  published: number;
  settled: number;
  commands: Record<string, number>;
}

/**
 * Fans `events` events (`sync.started`, emitted in the service: no job) out to `webhooks` webhooks
 * of one tenant, one event after the other, after one event to warm up (indexes, the worker's
 * copies of the webhooks), and returns what each delivery cost, its event's share included. The
 * clock is frozen, as for `jobRoundTrips`.
 */
export async function deliveryRoundTrips(backends: CountedBackends, webhooks = 20, events = 5): Promise<PerDelivery> {
  const receiver = await startReceiver({ status: 200 });
  const service = await startService({
    store: backends.store,
    queue: backends.queue,
    clock: new TestClock({ frozen: true }),
  });
  try {
    for (let i = 0; i < webhooks; i++) {
      const reply = await service.request('POST', '/webhooks', {
        body: { callbackUrl: `${receiver.url}/w${i}`, events: ['sync.started'] },
      });
      if (reply.status !== 201) throw new Error(`POST /webhooks answered ${reply.status}: ${reply.text}`);
    }
    const records = backends.observer.db(backends.database).collection('webhook_deliveries');
    let emitted = 0;
    const run = async (count: number) => {
      for (let i = 0; i < count; i++) {
        await service.kernel.emit({
          type: 'sync.started',
          tenant: tenantHash(KEY_A),
          opcoId: 'sandbox',
          data: { syncId: `rt-${++emitted}`, total: 1 },
        });
      }
      const total = emitted * webhooks;
      // Delivered and released: the last write of a delivery.
      await eventually(
        async () => (await records.countDocuments({ status: 'delivered' })) === total,
        `${total} deliveries delivered`,
        60_000,
      );
      await eventually(() => backends.counts.settled >= backends.counts.published, 'every message settled', 60_000);
    };
    await run(1);
    backends.counts.reset();
    await run(events);
    const counts = backends.counts.snapshot();
    const deliveries = webhooks * events;
    const per = (n: number) => n / deliveries;
    return {
      deliveries,
      store: per(counts.store),
      published: per(counts.published),
      settled: per(counts.settled),
      commands: Object.fromEntries(Object.entries(counts.commands).map(([name, n]) => [name, per(n)])),
    };
  } finally {
    await service.close();
    await receiver.close();
  }
}
