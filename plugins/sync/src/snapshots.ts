/**
 * What a tenant last saw of each dossier and invoice (D21), to tell what changed. Snapshots are
 * per tenant: two CFAs polling the same OPCO never compare against each other's data.
 */
import { canonicalJson, sha256Hex, type Clock, type Collection, type Store } from '@opco-proxy/core';

export interface Snapshot {
  _id: string;
  tenant: string;
  opcoId: string;
  kind: 'dossier' | 'facture';
  key: string;
  etat: string | null;
  /** Hash of the full dossier record (dossier.updated); null until its content was fetched. */
  hash: string | null;
  updatedAt: Date;
}

export class Snapshots {
  private readonly snapshots: Collection<Snapshot>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.snapshots = store.collection<Snapshot>('snapshots');
  }

  async prepare(): Promise<void> {
    await this.snapshots.createIndex({ tenant: 1, opcoId: 1, kind: 1 });
  }

  get(tenant: string, opcoId: string, kind: Snapshot['kind'], key: string): Promise<Snapshot | null> {
    return this.snapshots.findOne({ _id: snapshotId(tenant, opcoId, kind, key) });
  }

  async put(
    tenant: string,
    opcoId: string,
    kind: Snapshot['kind'],
    key: string,
    changes: Partial<Pick<Snapshot, 'etat' | 'hash'>>,
  ): Promise<void> {
    await this.snapshots.findOneAndUpdate(
      { _id: snapshotId(tenant, opcoId, kind, key) },
      {
        $set: { ...changes, updatedAt: this.clock.date() },
        $setOnInsert: { tenant, opcoId, kind, key, ...defaults(changes) },
      },
      { upsert: true },
    );
  }
}

function defaults(changes: Partial<Pick<Snapshot, 'etat' | 'hash'>>): Partial<Snapshot> {
  const missing: Partial<Snapshot> = {};
  if (!('etat' in changes)) missing.etat = null;
  if (!('hash' in changes)) missing.hash = null;
  return missing;
}

function snapshotId(tenant: string, opcoId: string, kind: string, key: string): string {
  return sha256Hex(`${tenant}\n${opcoId}\n${kind}\n${key}`);
}

/** Hash of a record whatever the order of its keys. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
