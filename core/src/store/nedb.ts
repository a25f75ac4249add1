/**
 * nedb, loaded the way it is published. Its typings declare an ES default export but the package
 * is CommonJS, so under NodeNext the types and the runtime value disagree; requiring it gives the
 * class itself, typed here from those same typings.
 */
import { createRequire } from 'node:module';
import type NedbModule from '@seald-io/nedb';

const require = createRequire(import.meta.url);

export type Datastore = InstanceType<typeof NedbModule.default>;
export const Datastore = require('@seald-io/nedb') as typeof NedbModule.default;

/**
 * nedb's own update engine ($set, $unset, $inc, $push on dotted paths) and ordering, absent from
 * its typings.
 */
export const nedbModel = require('@seald-io/nedb/lib/model.js') as {
  modify: (doc: Record<string, unknown>, update: Record<string, unknown>) => Record<string, unknown>;
  /** A document as its datafile line, and back (Dates as `{"$$date": ms}`). */
  serialize: (doc: object) => string;
  deserialize: (line: string) => Record<string, unknown>;
  getDotValue(doc: unknown, field: string): unknown;
  /** An index's key: the field's value, or an object of the fields' values for a compound index. */
  getDotValues(doc: unknown, fields: string[]): unknown;
  compareThings(a: unknown, b: unknown): number;
  /** Throws on a field name nedb cannot store (starting with `$`, or holding a `.`). */
  checkObject(doc: unknown): void;
};

/**
 * nedb's cursor without the copy `findAsync` makes of every match: it hands out the stored
 * documents themselves. nedb never changes a stored document in place (an update stores a
 * modified copy), so they can be read; the caller copies what it returns.
 */
export interface StoredDocuments<T> extends PromiseLike<T[]> {
  skip(n: number): StoredDocuments<T>;
  limit(n: number): StoredDocuments<T>;
}
export const StoredDocuments = require('@seald-io/nedb/lib/cursor.js') as new <T>(db: Datastore, query: Record<string, unknown>) => StoredDocuments<T>;

interface IndexPair {
  oldDoc: Record<string, unknown>;
  newDoc: Record<string, unknown>;
}
interface NedbIndex {
  _fields: string[];
  sparse: boolean;
  tree: { search(key: unknown): unknown[] };
  updateMultipleDocs(pairs: IndexPair[]): void;
}
const Index = require('@seald-io/nedb/lib/indexes.js') as { prototype: NedbIndex };

/**
 * nedb re-indexes an updated document by deleting it from each index's search tree and inserting
 * its new version, two walks that rebalance the tree, even when the indexed fields did not change,
 * as `_id` never does: a tenth of an embedded job's CPU. When they did not, the new version takes
 * the old one's place in its tree node instead: one search, and the tree is as it would be after
 * the delete and insert. Pairs whose key changed go through nedb's own update, and a failure there
 * (a unique key taken) puts the swapped ones back before it is thrown, as nedb's rollback expects.
 */
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call(this) below
const updateByMoving = Index.prototype.updateMultipleDocs;
Index.prototype.updateMultipleDocs = function updateMultipleDocs(this: NedbIndex, pairs: IndexPair[]): void {
  const swapped: IndexPair[] = [];
  const moved = pairs.filter((pair) => {
    if (!swapInPlace(this, pair.oldDoc, pair.newDoc)) return true;
    swapped.push(pair);
    return false;
  });
  if (moved.length === 0) return;
  try {
    updateByMoving.call(this, moved);
  } catch (err) {
    for (const pair of swapped) swapInPlace(this, pair.newDoc, pair.oldDoc);
    throw err;
  }
};

function swapInPlace(index: NedbIndex, from: Record<string, unknown>, to: Record<string, unknown>): boolean {
  const key = nedbModel.getDotValues(from, index._fields);
  // An array value puts the document under each of its elements: left to nedb.
  if (Array.isArray(key) || nedbModel.compareThings(key, nedbModel.getDotValues(to, index._fields)) !== 0) return false;
  const absent = key === undefined || (typeof key === 'object' && key !== null && !(key instanceof Date) && Object.values(key).every((v) => v === undefined));
  if (absent && index.sparse) return true;
  const node = index.tree.search(key);
  const at = node.indexOf(from);
  if (at < 0) return false;
  node[at] = to;
  return true;
}

interface DatastoreInternals {
  executor: { pushAsync<R>(task: () => Promise<R>): Promise<R> };
  persistence: { persistNewStateAsync(docs: object[]): Promise<void> };
  _insertInCache(docs: object | object[]): void;
}

/**
 * nedb's insert as `insertAsync` does it, without its two copies: it copies the document it is
 * given before checking and storing it, then copies what it stored to return it. The embedded
 * collection gives it a copy of its own (cloneDocument) that nothing else holds, and wants no
 * result, so that copy is checked (no `$` or `.` in field names) and stored as it is. An array
 * is stored all or nothing, as nedb does (its rollback on a unique key already taken).
 */
export function storeInserted(db: Datastore, docs: object[]): Promise<void> {
  const internals = db as unknown as DatastoreInternals;
  return internals.executor.pushAsync(async () => {
    for (const doc of docs) {
      const checked = bytesReplaced(doc, () => null);
      if (checked !== doc) BYTE_DOCUMENTS.add(doc);
      nedbModel.checkObject(checked);
    }
    internals._insertInCache(docs.length === 1 ? docs[0] : docs);
    await internals.persistence.persistNewStateAsync(docs);
  });
}

/**
 * Bytes (ports/store.ts) in nedb, which knows nothing of them: its key check and its copy walk a
 * Buffer's every element (a megabyte is a million keys), and its datafile would hold
 * Buffer.toJSON's array of numbers. So an inserted document is checked with its bytes left out
 * and stored as given (storeInserted); one that holds bytes is remembered, and refused by nedb's
 * update, whose copy would turn each Buffer into an object of a million keys; and a datafile
 * keeps bytes as `{"$$bytes": base64}`, read back as Buffers. No document of a caller's can hold
 * that key: nedb refuses field names that begin with `$`.
 */
const BYTE_DOCUMENTS = new WeakSet<object>();

const modifyDocument = nedbModel.modify;
nedbModel.modify = (doc, update) => {
  if (BYTE_DOCUMENTS.has(doc)) throw new TypeError('a document holding bytes cannot be updated: bytes are written once, then read or deleted');
  return modifyDocument(doc, update);
};

/** nedb's serialize, whose check of field names would refuse `$$bytes` (they were checked at insert). */
const serializeDocument = nedbModel.serialize;
nedbModel.serialize = (doc) => {
  if (!BYTE_DOCUMENTS.has(doc)) return serializeDocument(doc);
  const asText = bytesReplaced(doc, (bytes) => ({ $$bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') }));
  return JSON.stringify(asText, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? { $$date: raw.getTime() } : value;
  });
};

const deserializeDocument = nedbModel.deserialize;
nedbModel.deserialize = (line) => {
  const doc = deserializeDocument(line);
  if (line.includes('"$$bytes"') && revivedBytes(doc)) BYTE_DOCUMENTS.add(doc);
  return doc;
};

/**
 * The value with each of its bytes replaced, copying only the objects and arrays on the way to
 * them: the value itself when it holds none. Stored documents are at most MAX_DOCUMENT_DEPTH deep.
 */
function bytesReplaced(value: unknown, replace: (bytes: Uint8Array) => unknown): unknown {
  if (value instanceof Uint8Array) return replace(value);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, child] of Object.entries(value)) {
    const replaced = bytesReplaced(child, replace);
    if (replaced === child) continue;
    copy ??= (Array.isArray(value) ? [...(value as unknown[])] : { ...value }) as Record<string, unknown>;
    copy[key] = replaced;
  }
  return copy ?? value;
}

/** Turns each `{"$$bytes": base64}` of a document read from a datafile back into a Buffer, in place. */
function revivedBytes(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Date) return false;
  let found = false;
  const node = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(node)) {
    const text = (child as { $$bytes?: unknown } | null)?.$$bytes;
    if (typeof text === 'string') {
      node[key] = Buffer.from(text, 'base64');
      found = true;
    } else if (revivedBytes(child)) found = true;
  }
  return found;
}
