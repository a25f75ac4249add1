/**
 * Hub keys (SPEC 5.8, D26): an instance connects with one; each belongs to a fleet (one
 * publisher's upstream credentials, hence one budget) and has a name. The key is shown once, at
 * creation; the store keeps only its SHA-256, so a key is looked up by hash and never compared
 * character by character. A deleted key is kept as revoked, so the hub can tell an instance
 * "revoked" (403) rather than "unknown" (401).
 */
import { randomHex, sha256Hex, type Collection, type Store } from '@opco-proxy/core';

interface KeyRecord {
  _id: string;
  fleetId: string;
  /** The name of fleetId in records written before the rename (issue 29); read, never written. */
  tenantId?: string;
  name: string;
  keyHash: string;
  createdAt: Date;
  revokedAt?: Date;
}

export interface HubKey {
  id: string;
  fleetId: string;
  name: string;
  createdAt: string;
}

export type KeyCheck = { status: 'valid'; key: HubKey } | { status: 'revoked' } | { status: 'unknown' };

export class HubKeys {
  private readonly records: Collection<KeyRecord>;

  constructor(store: Store) {
    this.records = store.collection<KeyRecord>('hub_keys');
  }

  async init(): Promise<void> {
    await this.records.createIndex({ keyHash: 1 }, { unique: true });
  }

  /** Returns the key itself once; only its hash is stored. */
  async create(fleetId: string, name: string, now: Date): Promise<HubKey & { key: string }> {
    const key = `hk_${randomHex(32)}`;
    const record: KeyRecord = { _id: randomHex(12), fleetId, name, keyHash: sha256Hex(key), createdAt: now };
    await this.records.insertOne(record);
    return { ...view(record), key };
  }

  async list(): Promise<HubKey[]> {
    const records = await this.records.find({ revokedAt: { $exists: false } }, { sort: { createdAt: 1 } });
    return records.map(view);
  }

  /** True when an active key was revoked; false when no active key has that id. */
  async revoke(id: string, now: Date): Promise<boolean> {
    const revoked = await this.records.findOneAndUpdate(
      { _id: id, revokedAt: { $exists: false } },
      { $set: { revokedAt: now } },
    );
    return revoked !== null;
  }

  async check(key: string): Promise<KeyCheck> {
    const record = await this.records.findOne({ keyHash: sha256Hex(key) });
    if (!record) return { status: 'unknown' };
    if (record.revokedAt) return { status: 'revoked' };
    return { status: 'valid', key: view(record) };
  }
}

function view(record: KeyRecord): HubKey {
  return {
    id: record._id,
    fleetId: record.fleetId ?? record.tenantId!,
    name: record.name,
    createdAt: record.createdAt.toISOString(),
  };
}
