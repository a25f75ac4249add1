/**
 * Audit records (SPEC 5.3, 5.5; D32): one per state-changing request and operator action, in
 * the store before the answer leaves, partitioned by tenant. A record says who (tenant hash,
 * actor, client address, request id), what (the operationId), on what (opcoId and the ids of the
 * job, webhook, delivery or sync) and how it ended (status, error code, idempotency outcome);
 * never a body, a key, a secret or personal data: nothing of the request is copied but ids the
 * service made itself or path parameters checked by the route manifest.
 */
import type { AuditPage, AuditRecord } from '@opco-proxy/schemas';
import { newestFirst, oldestFirst, type PageRequest } from '../store/newest-first.js';
import { randomHex } from '../crypto/crypto.js';
import type { Clock } from '../clock.js';
import type { Collection, Filter, Store } from '../ports/store.js';

export type { AuditRecord };
export type AuditTargets = AuditRecord['targets'];

/** What the operation router knows of a request once its answer is decided. */
export type AuditEntry = Omit<AuditRecord, 'id' | 'at'>;

interface AuditDoc extends Omit<AuditRecord, 'id' | 'at'> {
  _id: string;
  at: Date;
}

export interface AuditFilter {
  tenant?: string;
  actor?: AuditRecord['actor'];
  action?: string;
  opcoId?: string;
  since?: string;
  until?: string;
  /** Only the records whose targets name this job. */
  jobId?: string;
}

export const AUDIT_COLLECTION = 'audit';

export class AuditLog {
  private readonly records: Collection<AuditDoc>;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.records = store.collection<AuditDoc>(AUDIT_COLLECTION);
  }

  /** The date index serves the purge and every page; the tenant's serves GET /audit. */
  async prepare(): Promise<void> {
    await this.records.createIndex({ at: -1 });
    await this.records.createIndex({ tenant: 1, at: -1 });
  }

  /** One store write; a failure is the caller's to turn into 503 (D32). */
  async write(entry: AuditEntry): Promise<void> {
    const at = this.clock.date();
    await this.records.insertOne({ _id: recordId(at), at, ...entry });
  }

  /** The records of one action on many things (a bulk retry), in one round trip where the store allows. */
  async writeMany(entries: readonly AuditEntry[]): Promise<void> {
    const at = this.clock.date();
    if (entries.length > 0)
      await this.records.insertMany(entries.map((entry) => ({ _id: recordId(at), at, ...entry })));
  }

  async page(filter: AuditFilter, request: PageRequest): Promise<AuditPage> {
    const page = await newestFirst(this.records, storeFilter(filter), 'at', request);
    return { items: page.records.map(toRecord), next: page.next ?? null };
  }

  /** Every record of the filter, oldest first, a page at a time (the CLI's export). */
  async *all(filter: AuditFilter, pageSize = 500): AsyncGenerator<AuditRecord> {
    let cursor: string | undefined;
    do {
      const page = await oldestFirst(this.records, storeFilter(filter), 'at', { limit: pageSize, cursor });
      for (const doc of page.records) yield toRecord(doc);
      cursor = page.next;
    } while (cursor);
  }

  /** Deletes the records older than `retentionDays` (the periodic task of the kernel). */
  purge(retentionDays: number): Promise<number> {
    return this.records.deleteMany({ at: { $lt: new Date(this.clock.now() - retentionDays * 86_400_000) } });
  }
}

/** Time first, so ids sort as records do in the store and in exports. */
function recordId(at: Date): string {
  return `${at.getTime().toString(36).padStart(9, '0')}${randomHex(6)}`;
}

function storeFilter(filter: AuditFilter): Filter {
  const where: Filter = {};
  if (filter.tenant !== undefined) where.tenant = filter.tenant;
  if (filter.actor !== undefined) where.actor = filter.actor;
  if (filter.action !== undefined) where.action = filter.action;
  if (filter.opcoId !== undefined) where.opcoId = filter.opcoId;
  if (filter.jobId !== undefined) where['targets.jobId'] = filter.jobId;
  const at: Record<string, Date> = {};
  if (filter.since !== undefined) at.$gte = new Date(filter.since);
  if (filter.until !== undefined) at.$lt = new Date(filter.until);
  if (Object.keys(at).length > 0) where.at = at;
  return where;
}

function toRecord({ _id, at, ...rest }: AuditDoc): AuditRecord {
  return { id: _id, at: at.toISOString(), ...rest };
}
