/**
 * Idempotency-Key (SPEC 4.0.4, D15): scoped to the tenant, kept 24 hours, at most 255
 * characters. The key's record is inserted under a unique `_id` before the job exists, so of
 * two requests racing on two instances exactly one creates a job; the other reads the winner's.
 * The payload's hash is SHA-256 of its canonical JSON, decoded files written as base64 again:
 * the same hash as when files were kept as the text the client sent (for the standard, padded
 * base64 every encoder writes), so keys reserved by earlier versions still compare.
 *
 * A key is the tenant's whatever the opcoId and operation (D15), so the same key sent to another
 * opcoId or route is a duplicate too: its answer points at the job that holds the key (its
 * opcoId's status URL, not the request's, where the job is not found) and warns that the request
 * differs, since nothing was sent where this one asked.
 */
import {
  DuplicateKeyError,
  canonicalJsonSha256,
  createError,
  sha256Hex,
  type Clock,
  type Collection,
  type Store,
} from '@opco-proxy/core';

interface KeyRecord {
  _id: string;
  tenant: string;
  jobId: string;
  payloadHash: string;
  expiresAt: Date;
  /** Where the job holding the key was sent (absent in keys reserved before it was recorded). */
  opcoId?: string;
  type?: string;
}

/** Where a submission goes: its opcoId and job type. */
export interface JobTarget {
  opcoId: string;
  type: string;
}

export type Reservation =
  | { fresh: true; release: () => Promise<void> }
  | { fresh: false; jobId: string; payloadDiffers: boolean; /** The holding job's, when recorded. */ opcoId?: string };

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

export class IdempotencyKeys {
  private readonly keys: Collection<KeyRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.keys = store.collection<KeyRecord>('idempotency_keys');
  }

  static check(key: string | undefined): string | undefined {
    if (key === undefined) return undefined;
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      const message = `Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} characters`;
      throw createError('VALIDATION_ERROR', message, { errors: [message] });
    }
    return key;
  }

  /** Reserves `key` for `jobId`, or tells which job already holds it; `payload` may hold Buffers (files). */
  async reserve(tenant: string, key: string, jobId: string, payload: unknown, target: JobTarget): Promise<Reservation> {
    const _id = sha256Hex(`${tenant}\n${key}`);
    const payloadHash = canonicalJsonSha256(payload);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.keys.insertOne({
          _id,
          tenant,
          jobId,
          payloadHash,
          expiresAt: new Date(this.clock.now() + IDEMPOTENCY_TTL_MS),
          ...target,
        });
        return { fresh: true, release: async () => void (await this.keys.deleteOne({ _id, jobId })) };
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const held = await this.keys.findOne({ _id });
      if (held && held.expiresAt > this.clock.date()) return duplicateOf(held, payloadHash, target);
      // Expired but not yet swept: free it and try once more.
      await this.keys.deleteOne({ _id, expiresAt: { $lte: this.clock.date() } });
    }
    throw createError('UNAVAILABLE', 'idempotency key could not be reserved; retry');
  }

  sweep(): Promise<number> {
    return this.keys.sweepExpired(this.clock.date());
  }
}

function duplicateOf(held: KeyRecord, payloadHash: string, target: JobTarget): Reservation {
  const elsewhere =
    (held.opcoId !== undefined && held.opcoId !== target.opcoId) ||
    (held.type !== undefined && held.type !== target.type);
  return {
    fresh: false,
    jobId: held.jobId,
    payloadDiffers: elsewhere || held.payloadHash !== payloadHash,
    ...(held.opcoId !== undefined && { opcoId: held.opcoId }),
  };
}
