/**
 * Idempotency-Key (SPEC 4.0.4, D15): scoped to the tenant, kept 24 hours, at most 255
 * characters. The key's record is inserted under a unique `_id` before the job exists, so of
 * two requests racing on two instances exactly one creates a job; the other reads the winner's.
 * The payload's hash is SHA-256 of its canonical JSON, decoded files written as base64 again:
 * the same hash as when files were kept as the text the client sent (for the standard, padded
 * base64 every encoder writes), so keys reserved by earlier versions still compare.
 */
import { DuplicateKeyError, canonicalJsonSha256, createError, sha256Hex, type Clock, type Collection, type Store } from '@opco-proxy/core';

interface KeyRecord {
  _id: string;
  tenant: string;
  jobId: string;
  payloadHash: string;
  expiresAt: Date;
}

export type Reservation = { fresh: true; release: () => Promise<void> } | { fresh: false; jobId: string; payloadDiffers: boolean };

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
  async reserve(tenant: string, key: string, jobId: string, payload: unknown): Promise<Reservation> {
    const _id = sha256Hex(`${tenant}\n${key}`);
    const payloadHash = canonicalJsonSha256(payload);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.keys.insertOne({ _id, tenant, jobId, payloadHash, expiresAt: new Date(this.clock.now() + IDEMPOTENCY_TTL_MS) });
        return { fresh: true, release: async () => void (await this.keys.deleteOne({ _id, jobId })) };
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      const held = await this.keys.findOne({ _id });
      if (held && held.expiresAt > this.clock.date()) return { fresh: false, jobId: held.jobId, payloadDiffers: held.payloadHash !== payloadHash };
      // Expired but not yet swept: free it and try once more.
      await this.keys.deleteOne({ _id, expiresAt: { $lte: this.clock.date() } });
    }
    throw createError('UNAVAILABLE', 'idempotency key could not be reserved; retry');
  }

  sweep(): Promise<number> {
    return this.keys.sweepExpired(this.clock.date());
  }
}
