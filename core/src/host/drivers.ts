/**
 * Backends are drivers (D3, issue 29): the kernel opens the store and the queue the config names
 * (`store.type`, `queue.type`) through the driver of that type. Core ships the embedded ones; the
 * application (`@opco-proxy/server`) adds the MongoDB and RabbitMQ drivers as ordinary package
 * dependencies, so core builds against no backend.
 */
import { createEmbeddedStore } from '../store/embedded-store.js';
import { createEmbeddedQueue } from '../queue/embedded-queue.js';
import { ConfigError } from '../errors/kernel-errors.js';
import type { Config } from '../config/config.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../observability/logger.js';
import type { Store } from '../ports/store.js';
import type { Queue } from '../ports/queue.js';

export type StoreSection = Config['store'];
export type QueueSection = Config['queue'];

export interface DriverContext {
  clock: Clock;
  /** The process's logger, for what a driver does on its own (a broker connection lost and dialled again). */
  log?: Logger;
}

/** Opens a Store for the config's `store` section whose `type` is the driver's. */
export interface StoreDriver {
  readonly type: string;
  open(section: StoreSection, context: DriverContext): Promise<Store>;
}

/** Opens a Queue for the config's `queue` section whose `type` is the driver's. */
export interface QueueDriver {
  readonly type: string;
  open(section: QueueSection, context: DriverContext): Promise<Queue>;
}

/** Drivers by `type`, each loaded when the config names it (a driver's client library is not small). */
export interface Drivers {
  stores?: Record<string, () => Promise<StoreDriver>>;
  queues?: Record<string, () => Promise<QueueDriver>>;
}

export const embeddedStoreDriver: StoreDriver = {
  type: 'embedded',
  open: (section) => createEmbeddedStore({ path: section.type === 'embedded' ? section.path : undefined }),
};

export const embeddedQueueDriver: QueueDriver = {
  type: 'embedded',
  open: (_section, { clock }) => Promise.resolve(createEmbeddedQueue({ clock })),
};

export async function openStore(section: StoreSection, drivers: Drivers, context: DriverContext): Promise<Store> {
  const driver = await pick('store', section.type, {
    embedded: () => Promise.resolve(embeddedStoreDriver),
    ...drivers.stores,
  });
  return driver.open(section, context);
}

export async function openQueue(section: QueueSection, drivers: Drivers, context: DriverContext): Promise<Queue> {
  const driver = await pick('queue', section.type, {
    embedded: () => Promise.resolve(embeddedQueueDriver),
    ...drivers.queues,
  });
  return driver.open(section, context);
}

/** An application's own driver of a type replaces the embedded one (spread last). */
function pick<D>(key: 'store' | 'queue', type: string, drivers: Record<string, () => Promise<D>>): Promise<D> {
  const load = Object.hasOwn(drivers, type) ? drivers[type] : undefined;
  if (!load)
    throw new ConfigError(
      `invalid configuration: ${key}.type: no ${key} driver "${type}" in this application (it has: ${Object.keys(drivers).join(', ')})`,
    );
  return load();
}
