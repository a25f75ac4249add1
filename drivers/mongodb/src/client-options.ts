/**
 * The MongoClient options of a store: the driver package's defaults, each one given only when the
 * URL's query string does not set it, because that is where operators put connection options
 * (`?w=1`, `?readPreference=…`): the driver lets options passed to MongoClient win over the URL's.
 *
 * The replica-set defaults (P18): `w: "majority"`, so that a write the store acknowledged survives
 * a change of primary (a w:1 write can be rolled back with it, and a job claim rolled back lets a
 * second worker send the job again without looking it up first, D18); retryable writes and reads,
 * so that a primary change mid-command is retried once on the new primary, the server recognising
 * a write it already applied; every read from the primary, since the store's reads decide (which
 * job is due, whether a step is done). A standalone server (FerretDB v1, what CI runs) accepts
 * them all: it treats majority as its one node, and the driver retries writes on replica sets and
 * sharded clusters only.
 */
import type { MongoClientOptions } from 'mongodb';

/** An unreachable server must fail start-up and /ready in seconds, not hang them (driver: 30 s). */
export const DEFAULT_TIMEOUT_MS = 5000;
/**
 * A server (or FerretDB's own database behind it) that stops answering on an open connection must
 * turn into "store unavailable" (503), not hold a request forever (driver: no limit). The store's
 * longest command, a sweep's scan of 500 records, takes far less.
 */
export const SOCKET_TIMEOUT_MS = 30_000;

export function clientOptions(url: string): MongoClientOptions {
  const query = new URLSearchParams(url.split('?')[1] ?? '');
  // The driver reads URL options case-insensitively.
  const keys = new Set([...query.keys()].map((key) => key.toLowerCase()));
  const unless = (name: string, option: MongoClientOptions): MongoClientOptions =>
    keys.has(name.toLowerCase()) ? {} : option;
  return {
    // Stored documents never hold undefined (the embedded store drops such fields too).
    ignoreUndefined: true,
    // Bytes are read back as Buffers, as the Store port says, not as BSON Binary objects.
    promoteBuffers: true,
    ...unless('serverSelectionTimeoutMS', { serverSelectionTimeoutMS: DEFAULT_TIMEOUT_MS }),
    ...unless('connectTimeoutMS', { connectTimeoutMS: DEFAULT_TIMEOUT_MS }),
    ...unless('socketTimeoutMS', { socketTimeoutMS: SOCKET_TIMEOUT_MS }),
    // Only `w`: the URL's wtimeoutMS or journal still join the driver's write concern.
    ...unless('w', { writeConcern: { w: 'majority' } }),
    ...unless('retryWrites', { retryWrites: true }),
    ...unless('retryReads', { retryReads: true }),
    ...unless('readPreference', { readPreference: 'primary' }),
  };
}
