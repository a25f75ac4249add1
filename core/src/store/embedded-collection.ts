/**
 * One collection of the embedded store: a nedb Datastore behind the Store port.
 *
 * nedb keeps the data, the indexes and the file; this class supplies what nedb lacks or does
 * differently: MongoDB filter semantics (filter-matching.ts), `$setOnInsert` and upserts seeded
 * from the filter, returnDocument 'before', and atomic read-then-write under a mutex.
 */
import { randomUUID } from 'node:crypto';
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOptions,
  type IndexOptions,
  type InsertManyResult,
  type SortSpec,
  type Update,
} from '../ports/store.js';
import { compileFilter, equalityFields, isPlainObject } from './filter-matching.js';
import { Mutex } from './mutex.js';
import { assertStorable, assertStorableUpdate } from './document-depth.js';
import { nedbModel, storeInserted, StoredDocuments, type Datastore } from './nedb.js';
import { inSortOrder } from './sort-order.js';

type Modifier = Omit<Update, '$setOnInsert'>;
const MODIFIERS = new Set(['$set', '$unset', '$inc', '$push']);

export class EmbeddedCollection<T extends Doc> implements Collection<T> {
  /** Every write takes it, so a findOneAndUpdate's read and write see no other write between. */
  private readonly writes = new Mutex();

  constructor(
    private readonly datastore: Promise<Datastore>,
    /** Whether there is a datafile to compact. */
    private readonly persistent: boolean,
    private readonly assertOpen: () => void,
  ) {}

  async insertOne(doc: T): Promise<void> {
    const copy = insertable(doc);
    await this.write((db) => storeInserted(db, [copy]));
  }

  /**
   * nedb inserts an array all or nothing (it undoes the batch on the first unique violation):
   * the whole batch in one step, and only when a key is held, one by one to skip just those.
   */
  async insertMany(docs: T[]): Promise<InsertManyResult> {
    if (!Array.isArray(docs)) throw new TypeError('insertMany needs an array of documents');
    const copies = docs.map(insertable);
    if (copies.length === 0) return { duplicates: [] };
    return this.write(async (db) => {
      try {
        await storeInserted(db, copies);
        return { duplicates: [] };
      } catch (err) {
        if ((err as { errorType?: string }).errorType !== 'uniqueViolated') throw err;
      }
      const duplicates: string[] = [];
      for (const copy of copies) {
        try {
          await storeInserted(db, [copy]);
        } catch (err) {
          if ((err as { errorType?: string }).errorType !== 'uniqueViolated') throw err;
          duplicates.push(copy._id);
        }
      }
      return { duplicates };
    });
  }

  async findOne(filter: Filter): Promise<T | null> {
    const [doc] = await this.find(filter, { limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const query = nedbQuery(filter);
    const db = await this.open();
    let cursor = new StoredDocuments<T>(db, query);
    if (options.sort) return inSortOrder(await cursor, options.sort, options.skip, options.limit).map(cloneDocument);
    if (options.skip) cursor = cursor.skip(options.skip);
    if (options.limit) cursor = cursor.limit(options.limit);
    return (await cursor).map(cloneDocument);
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    assertStorableUpdate(update);
    const query = nedbQuery(filter);
    const { modifier, setOnInsert } = splitUpdate(update);
    return this.write(async (db) => {
      if (modifier && !options.sort && !options.upsert && options.returnDocument !== 'before') {
        // One pass (the common write by _id): nedb changes the first match, as a find with a
        // limit of 1 would have picked it, and hands back its new version.
        const { affectedDocuments } = await db.updateAsync(query, modifier, { returnUpdatedDocs: true, multi: false });
        return affectedDocuments ? cloneDocument(affectedDocuments as unknown as T) : null;
      }
      const matches = new StoredDocuments<T>(db, query);
      const [before] = options.sort ? inSortOrder(await matches, options.sort, 0, 1) : await matches.limit(1);
      if (before) {
        // `before` is the stored document itself, which the update below replaces, not changes.
        if (options.returnDocument === 'before') {
          if (modifier) await db.updateAsync({ _id: before._id }, modifier, {});
          return cloneDocument(before);
        }
        const after = modifier
          ? ((await db.updateAsync({ _id: before._id }, modifier, { returnUpdatedDocs: true })).affectedDocuments as unknown as T)
          : before;
        return cloneDocument(after);
      }
      if (!options.upsert) return null;
      const inserted = await db.insertAsync(upsertDocument(filter, setOnInsert, modifier));
      return options.returnDocument === 'before' ? null : cloneDocument(inserted as unknown as T);
    });
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    assertStorableUpdate(update);
    const query = nedbQuery(filter);
    // $setOnInsert alone changes nothing in documents that already exist.
    const { modifier } = splitUpdate(update);
    return this.write(async (db) =>
      modifier ? (await db.updateAsync(query, modifier, { multi: true })).numAffected : db.countAsync(query),
    );
  }

  async deleteOne(filter: Filter): Promise<number> {
    const query = nedbQuery(filter);
    return this.write((db) => db.removeAsync(query, { multi: false }));
  }

  async deleteMany(filter: Filter): Promise<number> {
    const query = nedbQuery(filter);
    return this.write((db) => db.removeAsync(query, { multi: true }));
  }

  async count(filter: Filter = {}): Promise<number> {
    const query = nedbQuery(filter);
    const db = await this.open();
    return db.countAsync(query);
  }

  async createIndex(keys: SortSpec, options: IndexOptions = {}): Promise<void> {
    const fields = Object.keys(keys);
    if (fields.length === 0) throw new TypeError('an index needs at least one field');
    // nedb ignores direction and names; ensureIndex is a no-op when the fields are indexed already.
    const fieldName = fields.length === 1 ? fields[0] : fields;
    await this.write((db) => db.ensureIndexAsync({ fieldName, unique: options.unique ?? false }));
  }

  sweepExpired(now: Date = new Date()): Promise<number> {
    return this.deleteMany({ expiresAt: { $lte: now } });
  }

  /** Waits for queued writes, then rewrites the datafile compactly (no-op in memory). */
  async close(): Promise<void> {
    await this.writes.idle();
    const db = await this.datastore.catch(() => undefined);
    if (db && this.persistent) await db.compactDatafileAsync();
  }

  async compact(): Promise<void> {
    if (!this.persistent) return;
    const db = await this.open();
    await this.writes.run(() => db.compactDatafileAsync());
  }

  private async open(): Promise<Datastore> {
    this.assertOpen();
    return this.datastore;
  }

  private async write<R>(task: (db: Datastore) => Promise<R>): Promise<R> {
    const db = await this.open();
    try {
      return await this.writes.run(() => task(db));
    } catch (err) {
      if ((err as { errorType?: string }).errorType === 'uniqueViolated') {
        throw new DuplicateKeyError(`duplicate key: ${(err as Error).message}`);
      }
      throw err;
    }
  }
}

/** A copy of a document to insert, checked as every backend checks it. */
function insertable<D extends Doc>(doc: D): D {
  if (typeof doc !== 'object' || doc === null || typeof doc._id !== 'string' || doc._id === '') {
    throw new TypeError('a document needs a non-empty string _id');
  }
  assertStorable(doc);
  return cloneDocument(doc);
}

/**
 * nedb query for a port filter: our predicate through `$where`, plus the filter's scalar
 * equalities on top-level fields, at the top or in an `$and` (a lease claim is
 * `{$and: [{_id, ...}, ...]}`), which nedb matches identically and uses to pick candidates from
 * indexes. Without them nedb runs the predicate on every document of the collection.
 */
function nedbQuery(filter: Filter): Record<string, unknown> {
  const matches = compileFilter(filter);
  const query: Record<string, unknown> = {
    $where(this: unknown) {
      return matches(this);
    },
  };
  const lift = (clause: Filter): void => {
    for (const [key, value] of Object.entries(clause)) {
      if (key === '$and' && Array.isArray(value)) value.forEach((inner) => isPlainObject(inner) && lift(inner));
      else if (!key.startsWith('$') && !key.includes('.') && ['string', 'number', 'boolean'].includes(typeof value)) {
        // Two different values for one field match nothing: the predicate still says so.
        query[key] = value;
      }
    }
  };
  lift(filter);
  return query;
}

/** Validates the update against the port's subset and separates what applies on insert only. */
function splitUpdate(update: Update): { modifier: Modifier | undefined; setOnInsert: Record<string, unknown> } {
  if (!isPlainObject(update)) throw new TypeError('an update must be a plain object');
  const modifier: Record<string, unknown> = {};
  let setOnInsert: Record<string, unknown> = {};
  const operators = Object.entries(update);
  if (operators.length === 0) throw new TypeError('an update needs at least one operator');
  for (const [op, fields] of operators) {
    if (!isPlainObject(fields)) throw new TypeError(`${op} needs an object of fields`);
    if (op === '$setOnInsert') setOnInsert = fields;
    else if (MODIFIERS.has(op)) {
      if (Object.keys(fields).length > 0) modifier[op] = dropUndefined(fields);
    } else throw new TypeError(`unsupported update operator ${op}`);
  }
  // An empty modifier would make nedb replace the whole document.
  return { modifier: Object.keys(modifier).length > 0 ? (modifier) : undefined, setOnInsert };
}

/** `{...equality fields of the filter, ...$setOnInsert, ...$set}`, then the other operators. */
function upsertDocument(filter: Filter, setOnInsert: Record<string, unknown>, modifier: Modifier | undefined): Record<string, unknown> {
  const seed = equalityFields(filter);
  const _id = seed._id ?? setOnInsert._id ?? modifier?.$set?._id ?? randomUUID();
  if (typeof _id !== 'string') throw new TypeError('an upserted document needs a string _id');
  let doc: Record<string, unknown> = { _id };
  for (const fields of [seed, setOnInsert]) {
    const rest = dropUndefined(fields);
    delete rest._id;
    if (Object.keys(rest).length > 0) doc = nedbModel.modify(doc, { $set: rest });
  }
  if (modifier) doc = nedbModel.modify(doc, modifier);
  return cloneDocument(doc);
}

function dropUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
}

/**
 * A copy sharing nothing with the stored document but its bytes: nedb copies documents but hands
 * out its own Date instances, which a caller could mutate. Undefined fields are dropped, as in a
 * datafile. Bytes are not copied (ports/store.ts); a Uint8Array becomes a Buffer over its memory.
 */
function cloneDocument<D>(value: D): D {
  if (value instanceof Date) return new Date(value.getTime()) as D;
  if (value instanceof Uint8Array) return (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)) as D;
  if (Array.isArray(value)) return value.map((v: unknown) => (v === undefined ? null : cloneDocument(v))) as D;
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) copy[k] = cloneDocument(v);
    return copy as D;
  }
  return value;
}
