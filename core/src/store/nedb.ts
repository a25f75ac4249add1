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
  modify(doc: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown>;
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
    for (const doc of docs) nedbModel.checkObject(doc);
    internals._insertInCache(docs.length === 1 ? docs[0] : docs);
    await internals.persistence.persistNewStateAsync(docs);
  });
}
