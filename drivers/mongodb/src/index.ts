/**
 * The Store port on MongoDB, or on FerretDB v1 (what CI runs), through the official driver
 * (D3 `store: {type: "mongodb", url, database?}`).
 */
import { type CommandStartedEvent, type Db } from 'mongodb';
import {
  ConfigError,
  StoreUnavailableError,
  type Collection,
  type Doc,
  type Store,
  type StoreDriver,
} from '@opco-proxy/core';
import { ClientHolder } from './client-holder.js';
import { clientOptions, DEFAULT_TIMEOUT_MS } from './client-options.js';
import type { MongoStoreConfig } from './generated/config.js';
import { DocumentLocks } from './document-locks.js';
import { MongoCollection } from './mongo-collection.js';
import { UpdateSlots } from './update-slots.js';

export interface MongoStoreOptions {
  /** `mongodb://` or `mongodb+srv://`; options in the query string win over our defaults (client-options.ts). */
  url: string;
  /** Defaults to the database named in the URL, else `test`. */
  database?: string;
  /**
   * How findOneAndUpdate is made atomic: `server` trusts findAndModify (MongoDB), `lock` takes a
   * lease per document (document-locks.ts). Detected when absent: `lock` on FerretDB.
   */
  atomicity?: 'server' | 'lock';
  /**
   * Updates (findAndModify, update) this store sends at once at most, on FerretDB (update-slots.ts:
   * with as many in flight as its PostgreSQL pool has connections, FerretDB v1 deadlocks for
   * good). Default 8 on FerretDB, unbounded on MongoDB.
   */
  updateConcurrency?: number;
  /** After this long unreachable without a success, the client is replaced (client-holder.ts); default 15000. */
  replaceAfterMs?: number;
  /** Told when the client is replaced. */
  onReplace?: (cause: string) => void;
  /** Told of every command the store sends (driver command monitoring), to count round trips. */
  onCommand?: (event: CommandStartedEvent) => void;
}

/** Well under FerretDB's default pool (50) and this repository's CI pool (40), for several processes. */
const FERRETDB_UPDATE_CONCURRENCY = 8;

export async function createStore(options: MongoStoreOptions): Promise<Store> {
  const holder = new ClientHolder(
    options.url,
    clientOptions(options.url),
    options.database,
    options.replaceAfterMs ?? 15_000,
    options.onReplace,
    options.onCommand,
  );
  try {
    await holder.connect();
    const ferretDb = await isFerretDb(holder.db());
    const atomicity = options.atomicity ?? (ferretDb ? 'lock' : 'server');
    const updateConcurrency = options.updateConcurrency ?? (ferretDb ? FERRETDB_UPDATE_CONCURRENCY : undefined);
    return new MongoStore(
      holder,
      atomicity,
      updateConcurrency === undefined ? undefined : new UpdateSlots(updateConcurrency),
      ferretDb,
    );
  } catch (err) {
    await holder.close().catch(() => undefined);
    throw new Error(`cannot use MongoDB at ${redacted(options.url)}: ${(err as Error).message}`, { cause: err });
  }
}

/** The driver of `store: {type: "mongodb", url, database?}` (D3). */
export const storeDriver: StoreDriver = {
  type: 'mongodb',
  open(section) {
    if (section.type !== 'mongodb')
      throw new ConfigError(
        `invalid configuration: store.type: the mongodb driver cannot open a "${section.type}" store`,
      );
    const { url, database } = section as typeof section & MongoStoreConfig; // validated by config.schema.json
    return createStore({ url, database });
  },
};

export default { createStore, storeDriver };

class MongoStore implements Store {
  readonly kind = 'mongodb';
  readonly shared = true;
  private readonly collections = new Map<string, MongoCollection<Doc>>();
  private readonly locks: DocumentLocks | undefined;

  constructor(
    private readonly holder: ClientHolder,
    atomicity: 'server' | 'lock',
    private readonly updates: UpdateSlots | undefined,
    /** Filters are reshaped for FerretDB (filter-pushdown.ts). */
    private readonly pushdown: boolean,
  ) {
    this.locks = atomicity === 'lock' ? new DocumentLocks(() => holder.db(), updates) : undefined;
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new MongoCollection<Doc>(name, this.holder, this.locks, this.updates, this.pushdown);
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  async ping(): Promise<void> {
    // A server that stops answering on an open connection would hold the command forever
    // (the driver has no socket timeout by default); /ready must answer anyway.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`MongoDB did not answer ping within ${DEFAULT_TIMEOUT_MS} ms`)),
        DEFAULT_TIMEOUT_MS,
      );
    });
    try {
      await Promise.race([this.holder.run(() => this.holder.db().command({ ping: 1 })), timeout]);
    } catch (err) {
      throw new StoreUnavailableError(`MongoDB does not answer: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.holder.close();
  }
}

/** FerretDB answers buildInfo with its own version next to the MongoDB one it emulates. */
async function isFerretDb(db: Db): Promise<boolean> {
  const info = await db.command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string' || Boolean(info.ferretdbFeatures);
}

/** The URL without its password, for error messages that end up in logs. */
function redacted(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_, credentials: string) => `//${credentials.split(':')[0]}:***@`);
}
