/**
 * The Store port: document collections with Mongo-style filters and updates.
 *
 * Kept to what FerretDB v1 supports too: no transactions, no change streams, no TTL or
 * partial indexes, no projection on findOneAnd*. Expiry is an `expiresAt` Date field that
 * readers filter on and `sweepExpired` deletes.
 */

/**
 * Every stored document has a string `_id` chosen by the caller.
 *
 * A field's value may be bytes (a Buffer, or a Uint8Array read back as a Buffer): BSON binary
 * data on MongoDB, what a file's ciphertext is stored as without turning it into text. Bytes are
 * for values written once, then read or deleted: no update may carry them (TypeError), and a
 * document holding them is not updated (the embedded store refuses with a TypeError). Nor are
 * they matched or sorted on. The embedded store keeps the very Buffer it was given and hands it
 * out on reads, never copying megabytes: callers write to neither while the document exists.
 * Once it is deleted, its bytes are nobody's but the deleter's, who may give their memory back
 * (JobSecrets.purge does, for a file's pages).
 */
export interface Doc {
  _id: string;
}

/**
 * Mongo query subset both implementations understand: equality on (dotted) fields,
 * `$eq $ne $gt $gte $lt $lte $in $nin $exists`, and `$and` / `$or`.
 *
 * Callers write a filter as it reads best; serving it well is the backend's business. On
 * FerretDB v1 the MongoDB store rewrites what that server would read whole collections for (it
 * hands only top-level equalities to PostgreSQL): an `$and` of clauses on distinct fields goes
 * to the top level, and a `find` with a top-level `$in` of a few values becomes one search per
 * value (plugins/mongodb, filter-pushdown.ts).
 */
export type Filter = Record<string, unknown>;

/** Mongo update subset: `$set $unset $inc $push $setOnInsert`. */
export type Update = {
  $set?: Record<string, unknown>;
  $unset?: Record<string, unknown>;
  $inc?: Record<string, number>;
  $push?: Record<string, unknown>;
  $setOnInsert?: Record<string, unknown>;
};

export type SortSpec = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: SortSpec;
  limit?: number;
  skip?: number;
}

export interface FindOneAndUpdateOptions {
  /** Insert `{...equality fields of filter, ...$setOnInsert, ...$set}` when nothing matches. */
  upsert?: boolean;
  /** Which version to return; default 'after'. */
  returnDocument?: 'before' | 'after';
  /** When several match, update the first in this order. */
  sort?: SortSpec;
}

export interface InsertManyResult {
  /** The `_id`s of the documents not inserted because a unique key was held, in batch order. */
  duplicates: string[];
}

/**
 * A unique index is a constraint every backend keeps. Any other index is a hint for searches
 * and sorts, kept by a backend that can use it: the embedded store skips non-unique indexes of
 * several fields, as nedb takes candidates from one only on equality with every one of its
 * fields (no range, no sort) and its upkeep costs every write (a third of the service's CPU
 * under a burst of webhook deliveries, bench/RESULTS.md). Results never depend on indexes.
 */
export interface IndexOptions {
  unique?: boolean;
  name?: string;
}

export interface Collection<T extends Doc = Doc> {
  /** Throws DuplicateKeyError when `_id` or a unique index already holds the value. */
  insertOne(doc: T): Promise<void>;
  /**
   * Inserts many documents in one round trip where the backend allows it, each on its own: a
   * document whose `_id` or unique key is already held (by a stored document, an earlier one of
   * the batch, or a concurrent insert) is skipped and named in `duplicates`, and the others go
   * in. Of concurrent batches holding one `_id`, exactly one inserts it. Documents are checked
   * before any is written (TypeError); a backend failure may leave part of the batch written.
   */
  insertMany(docs: T[]): Promise<InsertManyResult>;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  /** Atomic: the document matched is the document changed, even across instances. */
  findOneAndUpdate(filter: Filter, update: Update, options?: FindOneAndUpdateOptions): Promise<T | null>;
  /** Returns how many documents matched. */
  updateMany(filter: Filter, update: Update): Promise<number>;
  /** Returns how many documents were deleted (0 or 1). */
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  count(filter?: Filter): Promise<number>;
  /** Idempotent. Unique indexes make concurrent inserts of one key fail with DuplicateKeyError. */
  createIndex(keys: SortSpec, options?: IndexOptions): Promise<void>;
  /** Deletes documents whose `expiresAt` is at or before `now`; returns the count. */
  sweepExpired(now?: Date): Promise<number>;
}

export interface Store {
  /** Names the backend, for operators (/ready, logs); not for callers to branch on. */
  readonly kind: string;
  /**
   * Whether other processes read and write the same documents (MongoDB). The embedded store is
   * this process's alone, so an in-process copy of what it holds needs no copy in it as well.
   */
  readonly shared: boolean;
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /** Resolves when the backend answers; rejects otherwise (used by /ready). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Documents are refused (TypeError, before any work) when nested deeper than this. Our own
 * records are a few levels deep; values that come from clients or upstreams are stored as JSON
 * text or sealed, never as nested documents, so this only stops a mistake from reaching a
 * backend whose own checks recurse (nedb's walk is exponential in nested arrays).
 */
export const MAX_DOCUMENT_DEPTH = 16;

/**
 * The backend cannot be reached or refused to serve for a while (connection lost, server
 * selection timed out, store closed): retry later. Every Store implementation raises this for
 * such failures, so one mapping turns it into 503 UNAVAILABLE (D5) everywhere.
 */
export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Raised by insertOne / upserts when a unique constraint is violated. */
export class DuplicateKeyError extends Error {
  readonly code = 'DUPLICATE_KEY';
  constructor(message = 'duplicate key') {
    super(message);
    this.name = 'DuplicateKeyError';
  }
}
