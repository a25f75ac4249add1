/**
 * One collection of the Store port on the official driver. Kept to what FerretDB v1 runs too:
 * no transactions, no projection on findOneAnd*, no TTL or partial indexes.
 */
import { randomUUID } from 'node:crypto';
import type { Collection as DriverCollection, Document, Filter as DriverFilter, IndexDescriptionInfo } from 'mongodb';
import {
  type Collection,
  type Doc,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type IndexOptions,
  type InsertManyResult,
  type SortSpec,
  type Update,
} from '@opco-proxy/core';
import {
  assertStorable,
  assertStorableUpdate,
  equalityFields,
  inSortOrder,
  isPlainObject,
} from '@opco-proxy/core/driver-kit';
import type { DocumentLocks } from './document-locks.js';
import type { ClientHolder } from './client-holder.js';
import type { UpdateSlots } from './update-slots.js';
import { isDuplicateKey } from './driver-errors.js';
import { flattened, splitIn } from './filter-pushdown.js';

export class MongoCollection<T extends Doc> implements Collection<T> {
  constructor(
    private readonly name: string,
    private readonly holder: ClientHolder,
    /** Set when the server's findAndModify is not atomic (FerretDB v1). */
    private readonly locks: DocumentLocks | undefined,
    /** Set on FerretDB: at most so many updates in flight (update-slots.ts). */
    private readonly updates?: UpdateSlots,
    /** On FerretDB: filters reshaped so that it hands them to PostgreSQL (filter-pushdown.ts). */
    private readonly pushdown = false,
  ) {}

  /** The filter checked, and on FerretDB reshaped to match the same documents faster. */
  private query(filter: Filter): DriverFilter<T> {
    const query = checked<T>(filter);
    return this.pushdown ? (flattened(query) as DriverFilter<T>) : query;
  }

  /** An update command, within the store's bound on FerretDB. */
  private update<R>(call: () => Promise<R>): Promise<R> {
    return this.updates ? this.updates.run(call) : call();
  }

  /** The driver's collection of the holder's current client (it may be replaced after an outage). */
  private get collection(): DriverCollection<T> {
    return this.holder.db().collection<T>(this.name);
  }

  async insertOne(doc: T): Promise<void> {
    await this.holder.run(() => this.collection.insertOne(insertable(doc) as never));
  }

  /** One unordered `insert` command: the server goes on past a duplicate and lists each one. */
  async insertMany(docs: T[]): Promise<InsertManyResult> {
    if (!Array.isArray(docs)) throw new TypeError('insertMany needs an array of documents');
    const copies = docs.map(insertable);
    if (copies.length === 0) return { duplicates: [] };
    return this.holder.run(async () => {
      try {
        await this.collection.insertMany(copies as never[], { ordered: false });
        return { duplicates: [] };
      } catch (err) {
        // Caught here, before `run` would turn the whole batch into one DuplicateKeyError.
        const duplicates = duplicatesOf(err, copies);
        if (duplicates) return { duplicates };
        throw err;
      }
    });
  }

  async findOne(filter: Filter): Promise<T | null> {
    const query = this.query(filter);
    return (await this.holder.run(() => this.collection.findOne(query))) as T | null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const query = this.query(filter);
    const parts = this.pushdown ? splitIn(query) : null;
    if (parts) return this.findEach(parts, options);
    return (await this.holder.run(() =>
      this.collection.find(query, { sort: options.sort, skip: options.skip, limit: options.limit }).toArray(),
    )) as T[];
  }

  /** The matches of any of `parts`, each once, in `options.sort` order, then skipped and limited. */
  private async findEach(parts: Filter[], options: FindOptions): Promise<T[]> {
    const take = options.limit ? (options.skip ?? 0) + options.limit : undefined;
    const found = await this.holder.run(() =>
      Promise.all(
        parts.map((part) =>
          this.collection.find(part as DriverFilter<T>, { sort: options.sort, limit: take }).toArray(),
        ),
      ),
    );
    const byId = new Map<string, T>();
    for (const doc of found.flat() as T[]) if (!byId.has(doc._id)) byId.set(doc._id, doc);
    const all = [...byId.values()];
    if (options.sort) return inSortOrder(all, options.sort, options.skip, options.limit);
    return all.slice(options.skip ?? 0, take);
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    filter = this.query(filter);
    assertStorableUpdate(update);
    if (this.locks) {
      const locks = this.locks;
      return this.holder.run(() => locks.findOneAndUpdate(this.collection, filter, update, options, isDuplicateKey));
    }
    const withId = options.upsert ? withUpsertId(filter, update) : update;
    const run = () =>
      this.update(
        () =>
          this.collection.findOneAndUpdate(filter as DriverFilter<T>, withId as Document, {
            upsert: options.upsert ?? false,
            sort: options.sort,
            returnDocument: options.returnDocument ?? 'after',
            includeResultMetadata: false,
          }) as Promise<T | null>,
      );
    return this.holder.run(async () => {
      try {
        return await run();
      } catch (err) {
        // Two upserts of one _id raced and the server did not retry: the second now matches.
        if (options.upsert && isDuplicateKey(err) && equalityFields(filter)._id !== undefined) return run();
        throw err;
      }
    });
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    const query = this.query(filter);
    assertStorableUpdate(update);
    const result = await this.holder.run(() =>
      this.update(() => this.collection.updateMany(query, update as Document)),
    );
    return result.matchedCount;
  }

  async deleteOne(filter: Filter): Promise<number> {
    const query = this.query(filter);
    return (await this.holder.run(() => this.collection.deleteOne(query))).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = this.query(filter);
    return (await this.holder.run(() => this.collection.deleteMany(query))).deletedCount;
  }

  async count(filter: Filter = {}): Promise<number> {
    const query = this.query(filter);
    return this.holder.run(() => this.collection.countDocuments(query));
  }

  async createIndex(keys: SortSpec, options: IndexOptions = {}): Promise<void> {
    const unique = options.unique ?? false;
    try {
      await this.holder.run(() =>
        this.collection.createIndex(keys, { unique, ...(options.name ? { name: options.name } : {}) }),
      );
    } catch (err) {
      // Same keys under another name (or concurrent creation) is not a failure of an idempotent call.
      if (!(await this.hasIndex(keys, unique))) throw err;
    }
  }

  sweepExpired(now: Date = new Date()): Promise<number> {
    return this.deleteMany({ expiresAt: { $lte: now } });
  }

  private async hasIndex(keys: SortSpec, unique: boolean): Promise<boolean> {
    const indexes = await (this.collection.listIndexes().toArray() as Promise<IndexDescriptionInfo[]>).catch(() => []);
    const wanted = JSON.stringify(keys);
    return indexes.some((index) => JSON.stringify(index.key) === wanted && Boolean(index.unique) === unique);
  }
}

/** A copy to insert: the driver adds an ObjectId _id to the object it is given when there is none. */
function insertable<D extends Doc>(doc: D): D {
  if (typeof doc !== 'object' || doc === null || typeof doc._id !== 'string' || doc._id === '') {
    throw new TypeError('a document needs a non-empty string _id');
  }
  assertStorable(doc);
  return { ...doc };
}

/** The `_id`s an unordered insert skipped, when every error it reports is a duplicate key; else null. */
function duplicatesOf(err: unknown, docs: Doc[]): string[] | null {
  const { writeErrors, writeConcernError } = (err ?? {}) as { writeErrors?: unknown; writeConcernError?: unknown };
  if (writeErrors === undefined || writeConcernError) return null;
  const errors = (Array.isArray(writeErrors) ? writeErrors : [writeErrors]) as {
    index?: unknown;
    code?: unknown;
    errmsg?: unknown;
  }[];
  if (
    errors.length === 0 ||
    !errors.every((e) => typeof e.index === 'number' && isDuplicateKey({ code: e.code, message: e.errmsg }))
  )
    return null;
  return errors
    .map((e) => e.index as number)
    .sort((a, b) => a - b)
    .map((i) => docs[i]._id);
}

/**
 * The driver drops undefined values (ignoreUndefined), which would turn `{tenant: undefined}`
 * into "every document"; refuse such a filter instead.
 */
function checked<T>(filter: Filter): DriverFilter<T> {
  const visit = (value: unknown, path: string): void => {
    if (value === undefined) throw new TypeError(`filter field ${path} is undefined`);
    if (Array.isArray(value)) value.forEach((item, i) => visit(item, `${path}.${i}`));
    else if (isPlainObject(value))
      for (const [key, item] of Object.entries(value)) visit(item, path ? `${path}.${key}` : key);
  };
  if (!isPlainObject(filter)) throw new TypeError('a filter must be a plain object');
  visit(filter, '');
  return filter as DriverFilter<T>;
}

/** Documents have string ids (the port); without one in the filter the server would pick an ObjectId. */
function withUpsertId(filter: Filter, update: Update): Update {
  if (
    equalityFields(filter)._id !== undefined ||
    update.$setOnInsert?._id !== undefined ||
    update.$set?._id !== undefined
  )
    return update;
  if ('_id' in filter) return update;
  return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: randomUUID() } };
}
