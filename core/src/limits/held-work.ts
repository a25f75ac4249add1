/**
 * What tenants the upstream has not accepted yet may make the service keep (issue 37, P13).
 * Their submissions, webhook registrations and syncs are not counted in requests (a publisher
 * onboarding its CFAs sends bursts from one server): they are accepted, marked with the client
 * address they came from (`heldFrom`), and bounded by what they hold in the store per address —
 * unfinished jobs, the bytes of their stored files, webhooks, unfinished syncs. Past a bound the
 * request is 429 with Retry-After; what was already accepted is untouched.
 *
 * Each plugin registers the records it keeps (HeldRecords) and counts them from its own
 * collection, so there is no counter to drift: a job that ends stops counting at once. A record
 * stays marked after its tenant is proven; when an address reaches a bound, the marks of its
 * tenants proven since are cleared and the count taken again. When the upstream refuses a key it
 * never accepted, the records that can never be served are dropped (the webhooks plugin deletes
 * the webhooks it registered); its pending jobs end `failed` at their first step, without
 * reaching the upstream, as a refused key's calls do (tenant-standing.ts).
 *
 * The same mechanism bounds what any one tenant keeps pending (issue 38): a plugin may give a
 * per-tenant bound for its records (`tenantBound`: unfinished jobs and the bytes of their files),
 * checked for every tenant, proven or not. A tenant's count is read from the store at most every
 * TENANT_RECOUNT_MS, and every NEAR_RECOUNT_MS once it is within a fifth of its bound (each
 * submission in between counted here): a count over the tenant's records at every submission
 * would make a large backlog slow to add to just when it is largest.
 */
import { createError } from '../errors/errors.js';
import type { Tenant } from '../pipeline/call-context.js';
import type { Clock } from '../clock.js';

export type HeldKind = 'jobs' | 'webhooks' | 'syncs';

/** The bounds per client address of what unproven tenants hold (`tenantKeys.unprovenHoldings`). */
export interface HeldBounds {
  jobs: number;
  webhooks: number;
  syncs: number;
  fileBytes: number;
}

/** A plugin's records that unproven tenants hold, counted from its own collection by their `heldFrom` mark. */
export interface HeldRecords {
  kind: HeldKind;
  /** How many marked records of the address still hold something (a job or sync not ended, a webhook). */
  countFrom(address: string): Promise<number>;
  /** The bytes of stored files the address's marked records hold (jobs). */
  bytesFrom?(address: string): Promise<number>;
  /** The tenants of the address's marked records, at most `limit`. */
  tenantsFrom(address: string, limit: number): Promise<string[]>;
  /** The tenant was proven: its records stop counting. */
  unmark(tenant: string): Promise<unknown>;
  /** The upstream refused the tenant's key before it ever accepted it. */
  dropRefused?(tenant: string): Promise<unknown>;
  /** What any one tenant may hold of these records (every tenant, proven or not). */
  tenantBound?: { count: number; fileBytes?: number };
  /** How many of the tenant's records hold something. */
  countOf?(tenant: string): Promise<number>;
  /** The bytes of stored files the tenant's records hold. */
  bytesOf?(tenant: string): Promise<number>;
}

/** Tenants looked at when an address reaches a bound: the proven ones' marks are cleared. */
const RECONCILED_TENANTS = 500;
/** What a refused client waits before trying again: its tenants' jobs run meanwhile. */
const RETRY_AFTER_S = 30;
/** How long a tenant's count read from the store is trusted while it is far from its bound. */
export const TENANT_RECOUNT_MS = 5000;
/** The same once the tenant is within a fifth of its bound. */
export const NEAR_RECOUNT_MS = 250;

interface TenantCount {
  count: number;
  bytes: number;
  at: number;
}

export class HeldWork {
  private readonly records = new Map<HeldKind, HeldRecords>();
  /** One admission at a time per address in this process, so a burst cannot pass a bound together. */
  private readonly lanes = new Map<string, Promise<unknown>>();
  /** Per kind and tenant: what it held when last counted, plus what this process added since. */
  private readonly tenantCounts = new Map<string, TenantCount>();

  constructor(
    private readonly clock: Clock,
    private readonly bounds: HeldBounds,
    /** Whether the tenant has been accepted by the upstream at any opcoId since. */
    private readonly isProven: (tenant: string) => Promise<boolean>,
    private readonly refusedHere: (kind: HeldKind | 'fileBytes') => void = () => undefined,
  ) {}

  register(records: HeldRecords): void {
    this.records.set(records.kind, records);
  }

  /**
   * Runs `store` (which writes the record, marked `heldFrom: tenant.unprovenFrom`) once the
   * tenant's address has room for one more `kind` holding `bytes` of files; a proven tenant's
   * record is stored at once. Throws 429 RATE_LIMITED when the address is at its bound.
   */
  async admit<T>(tenant: Tenant, kind: HeldKind, bytes: number, store: () => Promise<T>): Promise<T> {
    await this.tenantRoom(tenant.hash, kind, bytes);
    const address = tenant.unprovenFrom;
    if (address === undefined) return store();
    const ahead = this.lanes.get(address) ?? Promise.resolve();
    const turn = ahead.then(async () => {
      await this.makeRoom(address, kind, bytes);
      return store();
    });
    const settled = turn.catch(() => undefined);
    this.lanes.set(address, settled);
    void settled.then(() => {
      if (this.lanes.get(address) === settled) this.lanes.delete(address);
    });
    return turn;
  }

  /** 429 when one more `kind` holding `bytes` would pass the tenant's own bound (issue 38). */
  private async tenantRoom(tenant: string, kind: HeldKind, bytes: number): Promise<void> {
    const records = this.records.get(kind);
    const bound = records?.tenantBound;
    if (!records || !bound || !records.countOf) return;
    const key = `${kind}:${tenant}`;
    const now = this.clock.now();
    let known = this.tenantCounts.get(key);
    const near = (held: TenantCount) =>
      held.count + 1 > bound.count * 0.8 ||
      (bound.fileBytes !== undefined && bytes > 0 && held.bytes + bytes > bound.fileBytes * 0.8);
    if (!known || now - known.at > TENANT_RECOUNT_MS || (near(known) && now - known.at > NEAR_RECOUNT_MS)) {
      const counted =
        bound.fileBytes !== undefined && records.bytesOf && (bytes > 0 || (known && near(known)))
          ? await records.bytesOf(tenant)
          : (known?.bytes ?? 0);
      known = { count: await records.countOf(tenant), bytes: counted, at: now };
      this.tenantCounts.set(key, known);
      if (this.tenantCounts.size > 50_000) this.tenantCounts.clear();
    }
    const overCount = known.count + 1 > bound.count;
    const overBytes = bound.fileBytes !== undefined && bytes > 0 && known.bytes + bytes > bound.fileBytes;
    if (overCount || overBytes) {
      this.refusedHere(overBytes ? 'fileBytes' : kind);
      const what = overBytes ? `${bound.fileBytes} bytes of stored files` : `${bound.count} unfinished ${kind}`;
      throw createError(
        'RATE_LIMITED',
        `this API key holds ${what}, the most one tenant may; retry once some of its work has ended`,
        {
          headers: { 'Retry-After': String(RETRY_AFTER_S) },
        },
      );
    }
    known.count += 1;
    known.bytes += bytes;
  }

  /** Drops what a refused stranger stored that can never be served. */
  async refused(tenant: string): Promise<void> {
    for (const records of this.records.values()) await records.dropRefused?.(tenant);
  }

  private async makeRoom(address: string, kind: HeldKind, bytes: number): Promise<void> {
    let over = await this.over(address, kind, bytes);
    if (over && (await this.forgetProven(address))) over = await this.over(address, kind, bytes);
    if (!over) return;
    this.refusedHere(over);
    const bound =
      over === 'fileBytes'
        ? `${this.bounds.fileBytes} bytes of stored files`
        : `${this.bounds[over]} ${over === 'jobs' ? 'unfinished jobs' : over === 'syncs' ? 'unfinished syncs' : 'webhooks'}`;
    throw createError(
      'RATE_LIMITED',
      `API keys the upstream has not accepted yet hold ${bound} from this address, the most they may; retry once the upstream has accepted one of them or their work has ended`,
      {
        headers: { 'Retry-After': String(RETRY_AFTER_S) },
      },
    );
  }

  /** The bound one more `kind` holding `bytes` would pass, if any. */
  private async over(address: string, kind: HeldKind, bytes: number): Promise<HeldKind | 'fileBytes' | undefined> {
    const records = this.records.get(kind);
    if (!records) return undefined;
    if ((await records.countFrom(address)) + 1 > this.bounds[kind]) return kind;
    if (bytes > 0 && records.bytesFrom && (await records.bytesFrom(address)) + bytes > this.bounds.fileBytes)
      return 'fileBytes';
    return undefined;
  }

  /** Clears the marks of the address's tenants proven since; answers whether any was. */
  private async forgetProven(address: string): Promise<boolean> {
    const tenants = new Set<string>();
    for (const records of this.records.values())
      for (const tenant of await records.tenantsFrom(address, RECONCILED_TENANTS)) tenants.add(tenant);
    let forgot = false;
    for (const tenant of tenants) {
      if (!(await this.isProven(tenant))) continue;
      forgot = true;
      for (const records of this.records.values()) await records.unmark(tenant);
    }
    return forgot;
  }
}
