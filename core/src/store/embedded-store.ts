/**
 * The embedded Store (D3 `store: {type: "embedded", path?}`): collections kept in memory,
 * or, with a `path`, one append-only datafile per collection in that directory (datafile.ts).
 *
 * Single process by definition: two processes on one directory would overwrite each other's
 * files, and atomicity is only guaranteed within the process (see embedded-collection.ts).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreUnavailableError, type Collection, type Doc, type Store } from '../ports/store.js';
import { EmbeddedCollection } from './embedded-collection.js';

export interface EmbeddedStoreOptions {
  /** Directory of the datafiles, created if missing; in memory when absent. */
  path?: string;
}

/** Datafiles only grow between compactions (every change is appended); this bounds them. */
const COMPACTION_INTERVAL_MS = 10 * 60_000;

/** A collection name becomes a file name, so it may not hold separators or start with a dot. */
const COLLECTION_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,119}$/;

export async function createEmbeddedStore(options: EmbeddedStoreOptions = {}): Promise<Store> {
  if (options.path) await mkdir(options.path, { recursive: true });
  return new EmbeddedStore(options.path);
}

class EmbeddedStore implements Store {
  readonly kind = 'embedded';
  /** Single process by definition (above). */
  readonly shared = false;
  private readonly collections = new Map<string, EmbeddedCollection<Doc>>();
  private readonly compaction: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly dir: string | undefined) {
    if (dir) {
      this.compaction = setInterval(() => void this.compactAll(), COMPACTION_INTERVAL_MS);
      // Housekeeping must not keep the process alive.
      this.compaction.unref();
    }
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    this.assertOpen();
    if (!COLLECTION_NAME.test(name)) throw new TypeError(`invalid collection name ${JSON.stringify(name)}`);
    let collection = this.collections.get(name);
    if (!collection) {
      collection = new EmbeddedCollection<Doc>(this.dir && join(this.dir, `${name}.db`), () => this.assertOpen());
      this.collections.set(name, collection);
    }
    return collection as unknown as Collection<T>;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.compaction);
    await Promise.all([...this.collections.values()].map((c) => c.close()));
  }

  private async compactAll(): Promise<void> {
    for (const collection of this.collections.values()) {
      // A failed compaction leaves the previous file in place; the next round tries again.
      await collection.compact().catch(() => undefined);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('the embedded store is closed');
  }
}
