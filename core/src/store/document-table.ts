/**
 * The documents of one embedded collection in memory: a map by `_id` and the collection's
 * indexes, each a map from key to the documents holding it. Every change is all or nothing:
 * a batch that would give a unique key twice changes nothing. The documents are never changed
 * in place (update-operators.ts makes new versions), so a caller may read the stored ones.
 *
 * Index keys are MongoDB's: a missing field is null (two documents without a uniquely indexed
 * field collide), and an array value puts the document under each of its elements.
 */
import { DuplicateKeyError } from '../ports/store.js';
import type { IndexSpec, StoredDoc } from './datafile.js';
import { serialize } from './datafile.js';
import { valueAt } from './document-order.js';

/** Scalar equalities on top-level fields, which pick the candidates a filter is then run on. */
export type Equalities = Record<string, string | number | boolean>;

class FieldIndex {
  readonly entries = new Map<unknown, Set<StoredDoc>>();

  constructor(readonly spec: IndexSpec) {}

  keysOf(doc: StoredDoc): unknown[] {
    if (this.spec.fields.length > 1) return [compoundKey(this.spec.fields.map((field) => valueAt(doc, field)))];
    const value = valueAt(doc, this.spec.fields[0]);
    return Array.isArray(value) ? [...new Set(value.map(keyOf))] : [keyOf(value)];
  }

  /** The key of `doc` some other document holds, if this index is unique. */
  clash(doc: StoredDoc): unknown {
    if (!this.spec.unique) return undefined;
    return this.keysOf(doc).find((key) => (this.entries.get(key)?.size ?? 0) > 0);
  }

  add(doc: StoredDoc): void {
    for (const key of this.keysOf(doc)) {
      const holders = this.entries.get(key);
      if (holders) holders.add(doc);
      else this.entries.set(key, new Set([doc]));
    }
  }

  remove(doc: StoredDoc): void {
    for (const key of this.keysOf(doc)) {
      const holders = this.entries.get(key);
      holders?.delete(doc);
      if (holders?.size === 0) this.entries.delete(key);
    }
  }
}

/** A Map key standing for a value: scalars as themselves, anything else as tagged text. */
function keyOf(value: unknown): unknown {
  if (value === undefined || value === null || typeof value !== 'object') return value ?? null;
  if (value instanceof Date) return `\u0000date:${value.getTime()}`;
  return `\u0000json:${serialize(value)}`;
}

function compoundKey(values: unknown[]): string {
  return `\u0000compound:${serialize(values.map((value) => value ?? null))}`;
}

export class DocumentTable {
  readonly byId = new Map<string, StoredDoc>();
  private readonly indexes: FieldIndex[] = [];

  get indexSpecs(): IndexSpec[] {
    return this.indexes.map((index) => index.spec);
  }

  /** Inserts the documents, all of them or, on a key already held, none. */
  insert(docs: readonly StoredDoc[]): void {
    const added: StoredDoc[] = [];
    try {
      for (const doc of docs) {
        this.assertFree(doc);
        this.link(doc);
        added.push(doc);
      }
    } catch (err) {
      for (const doc of added) this.unlink(doc);
      throw err;
    }
  }

  /** Replaces each pair's stored version by its new one (same `_id`), all or none. */
  replace(pairs: ReadonlyArray<readonly [StoredDoc, StoredDoc]>): void {
    for (const [before] of pairs) for (const index of this.indexes) index.remove(before);
    const done: StoredDoc[] = [];
    try {
      for (const [, after] of pairs) {
        for (const index of this.indexes) if (index.clash(after) !== undefined) throw duplicate(index.spec, after);
        for (const index of this.indexes) index.add(after);
        done.push(after);
      }
    } catch (err) {
      for (const after of done) for (const index of this.indexes) index.remove(after);
      for (const [before] of pairs) for (const index of this.indexes) index.add(before);
      throw err;
    }
    for (const [, after] of pairs) this.byId.set(after._id, after);
  }

  remove(docs: readonly StoredDoc[]): void {
    for (const doc of docs) this.unlink(doc);
  }

  /** Adds an index over the stored documents; no-op when those fields are indexed already. */
  ensureIndex(spec: IndexSpec): boolean {
    if (this.indexes.some((index) => index.spec.fields.join(',') === spec.fields.join(','))) return false;
    const index = new FieldIndex(spec);
    for (const doc of this.byId.values()) {
      if (index.clash(doc) !== undefined) throw duplicate(spec, doc);
      index.add(doc);
    }
    this.indexes.push(index);
    return true;
  }

  /** The documents a filter with these equalities can match: by `_id`, an index, or all. */
  candidates(equalities: Equalities): Iterable<StoredDoc> {
    if ('_id' in equalities) {
      const doc = this.byId.get(equalities._id as string);
      return doc ? [doc] : [];
    }
    for (const index of this.indexes) {
      const { fields } = index.spec;
      if (!fields.every((field) => field in equalities)) continue;
      const key = fields.length > 1 ? compoundKey(fields.map((field) => equalities[field])) : equalities[fields[0]];
      return [...(index.entries.get(key) ?? [])];
    }
    return this.byId.values();
  }

  private assertFree(doc: StoredDoc): void {
    if (this.byId.has(doc._id))
      throw new DuplicateKeyError(`duplicate key: _id ${JSON.stringify(doc._id)} is already stored`);
    for (const index of this.indexes) if (index.clash(doc) !== undefined) throw duplicate(index.spec, doc);
  }

  private link(doc: StoredDoc): void {
    this.byId.set(doc._id, doc);
    for (const index of this.indexes) index.add(doc);
  }

  private unlink(doc: StoredDoc): void {
    if (this.byId.get(doc._id) !== doc) return;
    this.byId.delete(doc._id);
    for (const index of this.indexes) index.remove(doc);
  }
}

function duplicate(spec: IndexSpec, doc: StoredDoc): DuplicateKeyError {
  return new DuplicateKeyError(
    `duplicate key: ${spec.fields.join(', ')} of ${JSON.stringify(doc._id)} is already held`,
  );
}
