/**
 * Atomic findOneAndUpdate for servers whose own is not: FerretDB v1 runs findAndModify (and
 * update) as a read, then a write by _id that does not re-check the filter, so 50 concurrent
 * claims of 10 free slots gave 32 "winners". On PostgreSQL as on SQLite: v1.24.2's handler queries,
 * then updates, in no transaction (internal/handler/msg_findandmodify.go), and 8 concurrent claims
 * of 3 free slots on FerretDB-on-PostgreSQL gave 8 winners in 9 rounds of 10 (checked for issue
 * 11, bench/RESULTS.md). Its inserts, though, are atomic against the unique _id index, and a
 * delete reports a document as deleted to one caller only.
 *
 * So here a findOneAndUpdate first takes a short lease on a candidate document, an insert of
 * `{_id: "<collection>/<document _id>"}` into one locks collection, and only the holder re-checks
 * the filter and updates. Every findOneAndUpdate through this package takes the lease, in every
 * process; other writes (updateMany, deleteOne) do not, which the port does not ask of them.
 *
 * A lease whose holder died is removed once expired by the next caller that finds everything it
 * wants locked. FerretDB's delete does not re-check its filter either, so in a window of
 * microseconds such a removal could hit a lease taken a moment before: a residual risk that only
 * exists after a process died in the middle of a claim.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection as DriverCollection, Db, Document, Filter as DriverFilter } from 'mongodb';
import { type Doc, type Filter, type FindOneAndUpdateOptions, type Update } from '@opco-proxy/core';
import { equalityFields } from '@opco-proxy/core/driver-kit';
import { upsertDocument } from './upsert-document.js';
import type { UpdateSlots } from './update-slots.js';

export const LOCKS_COLLECTION = '_store_locks';

/**
 * Long enough for one find-and-update round trip many times over, and short because it is how
 * long a holder that died mid-claim blocks its document: a hub killed while renewing its lease
 * held the lease record's lock 15 s, so the standby took over 11 s after the lease had lapsed.
 */
const LOCK_LEASE_MS = 5000;
/** A holder whose update has not started by then (it waited for an update slot) lets go and tries again. */
const WRITE_START_MS = LOCK_LEASE_MS / 2;
/** Past this, a findOneAndUpdate that keeps finding its candidates locked gives up. */
const CLAIM_TIMEOUT_MS = 3 * LOCK_LEASE_MS;
/** Candidates fetched per round, so that contenders spread over several documents. */
const CANDIDATES = 16;

/** What a write that started too late under its lock resolves to. */
const LATE = Symbol('late');

interface Lock {
  _id: string;
  token: string;
  expiresAt: Date;
}

export class DocumentLocks {
  /** The database of the store's current client (it may be replaced after an outage). */
  constructor(
    private readonly db: () => Db,
    /** FerretDB's bound on updates in flight (update-slots.ts), for the update made under a lease. */
    private readonly updates?: UpdateSlots,
  ) {}

  private get locks(): DriverCollection<Lock> {
    return this.db().collection<Lock>(LOCKS_COLLECTION);
  }

  async findOneAndUpdate<T extends Doc>(
    collection: DriverCollection<T>,
    filter: Filter,
    update: Update,
    options: FindOneAndUpdateOptions,
    isDuplicateKey: (err: unknown) => boolean,
  ): Promise<T | null> {
    const deadline = Date.now() + CLAIM_TIMEOUT_MS;
    // A filter naming its document needs no search for candidates: lock it, and the update under
    // the lock checks the rest of the filter (one round trip fewer for every write by id).
    const id = options.upsert ? undefined : equalityFields(filter)._id;
    for (;;) {
      const candidates =
        typeof id === 'string'
          ? [{ _id: id }]
          : await collection.find(filter as DriverFilter<T>, { sort: options.sort, limit: CANDIDATES }).toArray();
      if (candidates.length === 0) {
        if (!options.upsert) return null;
        const doc = upsertDocument(filter, update);
        try {
          await collection.insertOne(doc as never);
          return options.returnDocument === 'before' ? null : (doc as unknown as T);
        } catch (err) {
          // Another caller inserted this _id first: go round again and update theirs.
          if (isDuplicateKey(err) && (await collection.countDocuments({ _id: doc._id } as DriverFilter<T>)) > 0)
            continue;
          throw err;
        }
      }
      const keys = candidates.map((candidate) => `${collection.collectionName}/${candidate._id}`);
      let contended = 0;
      for (const [i, candidate] of candidates.entries()) {
        const key = keys[i];
        const acquiredAt = Date.now();
        const token = await this.tryAcquire(key);
        if (!token) {
          contended++;
          continue;
        }
        try {
          // The update must land well inside the lock's lease: past it, another caller may take
          // the lock and update the same document.
          const write = (): Promise<T | null | typeof LATE> =>
            Date.now() - acquiredAt > WRITE_START_MS
              ? Promise.resolve(LATE)
              : (collection.findOneAndUpdate(withId(filter, candidate._id) as DriverFilter<T>, update as Document, {
                  returnDocument: options.returnDocument ?? 'after',
                  includeResultMetadata: false,
                }) as Promise<T | null>);
          const result = await (this.updates ? this.updates.run(write) : write());
          if (result === LATE) {
            contended++;
            continue;
          }
          // null: it stopped matching between our find and our lock; try the next one.
          if (result) return result;
        } finally {
          // A failed release must not turn a done update into an error; the lease runs out.
          await this.release(key, token).catch(() => undefined);
        }
      }
      // The one document named did not match under its lock.
      if (typeof id === 'string' && contended === 0) return null;
      if (contended === candidates.length) {
        if (Date.now() > deadline) {
          throw new Error(
            `findOneAndUpdate on ${collection.collectionName}: matching documents stayed locked for ${CLAIM_TIMEOUT_MS} ms`,
          );
        }
        // Everything we wanted was locked: maybe by a process that died holding the lease.
        await this.locks.deleteMany({ _id: { $in: keys }, expiresAt: { $lte: new Date() } });
        await sleep(2 + Math.random() * 8);
      }
    }
  }

  /** The lease's token, or null when someone else holds the lease. */
  private async tryAcquire(key: string): Promise<string | null> {
    const token = randomUUID();
    try {
      await this.locks.insertOne({ _id: key, token, expiresAt: new Date(Date.now() + LOCK_LEASE_MS) });
      return token;
    } catch (err) {
      if ((err as { code?: unknown }).code === 11000) return null;
      throw err;
    }
  }

  private async release(key: string, token: string): Promise<void> {
    await this.locks.deleteOne({ _id: key, token });
  }
}

/**
 * The filter narrowed to one document, written so that FerretDB v1 reads that document by its
 * `_id` index: it pushes top-level equalities down to PostgreSQL, never `$and`, and a
 * findAndModify whose filter it cannot push down reads and decodes the whole collection (15 ms
 * against 1.8 ms on 1,000 budget slots; every write to a job scanned every stored job).
 */
export function withId(filter: Filter, id: unknown): Filter {
  if (!('_id' in filter)) return { ...filter, _id: id };
  if (typeof id === 'string' && filter._id === id) return filter;
  return { $and: [{ _id: id }, filter] };
}
