/**
 * One collection of the embedded store, behind the Store port: its documents in memory
 * (document-table.ts), MongoDB filter semantics (filter-matching.ts), the update operators
 * (update-operators.ts) and, with a directory, its datafile (datafile.ts). A write reads and
 * changes the table and queues its append in one synchronous step, so a findOneAndUpdate's read
 * and write see no other write between and the appends keep the order of the changes, atomic
 * within the process, which is all the embedded store has to promise; it is acknowledged once
 * its append is written to the datafile.
 */
import { randomUUID } from 'node:crypto';
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
  DuplicateKeyError,
} from '../ports/store.js';
import { Datafile, type StoredDoc } from './datafile.js';
import { assertStorable, assertStorableUpdate, holdsBytes } from './document-depth.js';
import { DocumentTable, type Equalities } from './document-table.js';
import { compileFilter, equalityFields, isPlainObject, type Predicate } from './filter-matching.js';
import { inSortOrder } from './sort-order.js';
import { applyUpdate, assertFieldNames, copyValue, type Modifier } from './update-operators.js';

const MODIFIERS = new Set(['$set', '$unset', '$inc', '$push']);

/**
 * Stored documents holding bytes: written once, never updated (ports/store.ts). Kept aside so
 * that an update need not walk a document for them.
 */
const BYTE_DOCUMENTS = new WeakSet<object>();

interface Storage {
  table: DocumentTable;
  /** Absent in memory. */
  datafile?: Datafile;
}

export class EmbeddedCollection<T extends Doc> implements Collection<T> {
  private readonly storage: Promise<Storage>;

  constructor(
    /** The datafile's path; in memory when absent. */
    filename: string | undefined,
    private readonly assertOpen: () => void,
  ) {
    this.storage = load(filename);
    // A load failure (unreadable or corrupt file) surfaces on the collection's next call.
    this.storage.catch(() => undefined);
  }

  async insertOne(doc: T): Promise<void> {
    const copy = insertable(doc);
    const { table, datafile } = await this.open();
    table.insert([copy]);
    await datafile?.append([copy]);
  }

  /** The whole batch in one step, and only when a key is held, one by one to skip just those. */
  async insertMany(docs: T[]): Promise<InsertManyResult> {
    if (!Array.isArray(docs)) throw new TypeError('insertMany needs an array of documents');
    const copies = docs.map(insertable);
    if (copies.length === 0) return { duplicates: [] };
    const { table, datafile } = await this.open();
    const duplicates: string[] = [];
    let inserted = copies;
    try {
      table.insert(copies);
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      inserted = copies.filter((copy) => {
        try {
          table.insert([copy]);
          return true;
        } catch (err) {
          if (!(err instanceof DuplicateKeyError)) throw err;
          duplicates.push(copy._id);
          return false;
        }
      });
    }
    await datafile?.append(inserted);
    return { duplicates };
  }

  async findOne(filter: Filter): Promise<T | null> {
    const [doc] = await this.find(filter, { limit: 1 });
    return doc ?? null;
  }

  async find(filter: Filter, options: FindOptions = {}): Promise<T[]> {
    const search = searchFor(filter);
    const { table } = await this.open();
    return matching(table, search, options).map(copyValue) as unknown as T[];
  }

  async findOneAndUpdate(filter: Filter, update: Update, options: FindOneAndUpdateOptions = {}): Promise<T | null> {
    assertStorableUpdate(update);
    const search = searchFor(filter);
    const { modifier, setOnInsert } = splitUpdate(update);
    const { table, datafile } = await this.open();
    const [before] = matching(table, search, { sort: options.sort, limit: 1 });
    if (before) {
      const after = modifier ? updated(before, modifier) : before;
      if (after !== before) {
        table.replace([[before, after]]);
        await datafile?.append([after]);
      }
      return copyValue(options.returnDocument === 'before' ? before : after) as unknown as T;
    }
    if (!options.upsert) return null;
    const inserted = upsertDocument(filter, setOnInsert, modifier);
    table.insert([inserted]);
    await datafile?.append([inserted]);
    return options.returnDocument === 'before' ? null : (copyValue(inserted) as unknown as T);
  }

  async updateMany(filter: Filter, update: Update): Promise<number> {
    assertStorableUpdate(update);
    const search = searchFor(filter);
    // $setOnInsert alone changes nothing in documents that already exist.
    const { modifier } = splitUpdate(update);
    const { table, datafile } = await this.open();
    const matches = matching(table, search, {});
    if (!modifier || matches.length === 0) return matches.length;
    const pairs = matches.map((doc) => [doc, updated(doc, modifier)] as const);
    table.replace(pairs);
    await datafile?.append(pairs.map(([, after]) => after));
    return matches.length;
  }

  deleteOne(filter: Filter): Promise<number> {
    return this.remove(filter, 1);
  }

  deleteMany(filter: Filter): Promise<number> {
    return this.remove(filter, undefined);
  }

  async count(filter: Filter = {}): Promise<number> {
    const search = searchFor(filter);
    const { table } = await this.open();
    return matching(table, search, {}).length;
  }

  async createIndex(keys: SortSpec, options: IndexOptions = {}): Promise<void> {
    const fields = Object.keys(keys);
    if (fields.length === 0) throw new TypeError('an index needs at least one field');
    if (fields.some((field) => field.includes(','))) throw new TypeError('an indexed field name cannot hold a comma');
    // A search hint that would serve no range and no sort here, only upkeep on every write (IndexOptions).
    if (fields.length > 1 && !options.unique) return;
    // Directions and names mean nothing here: an index serves equality lookups only.
    const spec = { fields: [...fields].sort(), unique: options.unique ?? false };
    const { table, datafile } = await this.open();
    if (table.ensureIndex(spec)) await datafile?.appendIndex(spec);
  }

  sweepExpired(now: Date = new Date()): Promise<number> {
    return this.deleteMany({ expiresAt: { $lte: now } });
  }

  /** Rewrites the datafile compactly once the queued appends are written (no-op in memory). */
  async close(): Promise<void> {
    const storage = await this.storage.catch(() => undefined);
    await storage?.datafile?.rewrite(storage.table.byId.values(), storage.table.indexSpecs);
  }

  /** Rewrites the datafile with only the documents it holds (no-op in memory). */
  async compact(): Promise<void> {
    const { table, datafile } = await this.open();
    await datafile?.rewrite(table.byId.values(), table.indexSpecs);
  }

  private async remove(filter: Filter, limit: number | undefined): Promise<number> {
    const search = searchFor(filter);
    const { table, datafile } = await this.open();
    const matches = matching(table, search, { limit });
    table.remove(matches);
    await datafile?.append(
      [],
      matches.map((doc) => doc._id),
    );
    return matches.length;
  }

  private async open(): Promise<Storage> {
    this.assertOpen();
    return this.storage;
  }
}

async function load(filename: string | undefined): Promise<Storage> {
  const table = new DocumentTable();
  if (!filename) return { table };
  const { datafile, docs, indexes } = await Datafile.open(filename);
  for (const doc of docs) if (holdsBytes(doc)) BYTE_DOCUMENTS.add(doc);
  table.insert(docs);
  for (const spec of indexes) table.ensureIndex(spec);
  return { table, datafile };
}

interface Search {
  matches: Predicate;
  equalities: Equalities;
}

/**
 * A filter's predicate, and its scalar equalities on top-level fields, at the top or in an
 * `$and` (a lease claim is `{$and: [{_id, ...}, ...]}`), which pick the candidates by `_id` or
 * an index. Two values for one field match nothing: either picks a superset, the predicate decides.
 */
function searchFor(filter: Filter): Search {
  const matches = compileFilter(filter);
  const equalities: Equalities = {};
  const lift = (clause: Filter): void => {
    for (const [key, value] of Object.entries(clause)) {
      if (key === '$and' && Array.isArray(value)) value.forEach((inner) => isPlainObject(inner) && lift(inner));
      else if (
        !key.startsWith('$') &&
        !key.includes('.') &&
        (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      ) {
        equalities[key] = value;
      }
    }
  };
  lift(filter);
  return { matches, equalities };
}

/** The stored documents matching, in their order or the sort's; the caller copies what it hands out. */
function matching(table: DocumentTable, search: Search, options: FindOptions): StoredDoc[] {
  const found: StoredDoc[] = [];
  const skip = options.sort ? 0 : (options.skip ?? 0);
  const enough = options.sort || !options.limit ? Infinity : skip + options.limit;
  for (const doc of table.candidates(search.equalities)) {
    if (!search.matches(doc)) continue;
    found.push(doc);
    if (found.length >= enough) break;
  }
  if (options.sort) return inSortOrder(found, options.sort, options.skip, options.limit);
  return skip > 0 ? found.slice(skip) : found;
}

function updated(doc: StoredDoc, modifier: Modifier): StoredDoc {
  if (BYTE_DOCUMENTS.has(doc))
    throw new TypeError('a document holding bytes cannot be updated: bytes are written once, then read or deleted');
  return applyUpdate(doc, modifier);
}

/** A copy of a document to insert, checked as every backend checks it. */
function insertable<D extends Doc>(doc: D): D & StoredDoc {
  if (typeof doc !== 'object' || doc === null || typeof doc._id !== 'string' || doc._id === '') {
    throw new TypeError('a document needs a non-empty string _id');
  }
  assertStorable(doc);
  assertFieldNames(doc);
  const copy = copyValue(doc) as D & StoredDoc;
  if (holdsBytes(copy)) BYTE_DOCUMENTS.add(copy);
  return copy;
}

/** Validates the update against the port's subset and separates what applies on insert only. */
function splitUpdate(update: Update): { modifier: Modifier | undefined; setOnInsert: Record<string, unknown> } {
  if (!isPlainObject(update)) throw new TypeError('an update must be a plain object');
  const modifier: Record<string, Record<string, unknown>> = {};
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
  return { modifier: Object.keys(modifier).length > 0 ? modifier : undefined, setOnInsert };
}

/** `{...equality fields of the filter, ...$setOnInsert, ...$set}`, then the other operators. */
function upsertDocument(
  filter: Filter,
  setOnInsert: Record<string, unknown>,
  modifier: Modifier | undefined,
): StoredDoc {
  const seed = equalityFields(filter);
  const _id = seed._id ?? setOnInsert._id ?? modifier?.$set?._id ?? randomUUID();
  if (typeof _id !== 'string') throw new TypeError('an upserted document needs a string _id');
  let doc: StoredDoc = { _id };
  for (const fields of [seed, setOnInsert]) {
    const { _id: _ignored, ...rest } = dropUndefined(fields);
    if (Object.keys(rest).length > 0) doc = applyUpdate(doc, { $set: rest });
  }
  return modifier ? applyUpdate(doc, modifier) : doc;
}

/** The fields without those set to undefined (the caller's object itself when it has none). */
function dropUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  for (const key in fields) {
    if (fields[key] === undefined) return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  }
  return fields;
}
