/**
 * What the upstream has said of a tenant's key, per opcoId (issue 27, docs/decisions.md P13).
 * Only the upstream knows which X-API-KEYs are real, so the service learns it from the answers:
 *
 * - **proven**: the upstream answered the key with something that shows it accepted it (a 2xx,
 *   or a 4xx about the request itself: not found, invalid input), within `provenTtlS`;
 * - **refused**: the upstream refused the key (401/403 on the key, D8) within `refusedTtlS`: the
 *   service answers 403 itself meanwhile, spending no budget, then lets it try again (a key the
 *   OPCO renewed works again);
 * - **unproven**: neither. Its calls share a small slice of each window's budget (admission).
 *
 * Kept in the store (collection `tenant_standing`, one document per opcoId and tenant hash, with
 * an `expiresAt`) so every instance knows; each instance keeps what it read for
 * `LOCAL_RECHECK_MS` at most, so a refusal one instance learns reaches the others within that.
 */
import { createError } from './errors.js';
import type { Clock } from './clock.js';
import type { Collection, Store } from './ports/store.js';

export type Standing = 'proven' | 'unproven' | 'refused';

export interface TenantStandingOptions {
  provenTtlS: number;
  refusedTtlS: number;
}

interface StandingDoc {
  _id: string;
  opcoId: string;
  tenant: string;
  standing: 'proven' | 'refused';
  expiresAt: Date;
}

interface Known {
  standing: Standing;
  /** When the store's answer stops being true (its expiresAt), ms. */
  until: number;
  /** When this instance reads the store again, ms. */
  recheckAt: number;
  /** A read of the store is on its way for it. */
  refreshing?: boolean;
}

/** How long an instance trusts what it read before reading the store again. */
export const LOCAL_RECHECK_MS = 10_000;
/** Standings past their lifetime are never read; sweeping them (workers) only frees the store. */
export const STANDING_SWEEP_MS = 10 * 60_000;
/** Standings remembered per instance; the least recently used are forgotten first. */
const LOCAL_MAX = 20_000;
/** The key of "proven at some opcoId", for routes that name none (webhooks, sync, pollers). */
const ANY_OPCO = '*';
const NOTHING = () => undefined;

export class TenantStanding {
  private readonly docs: Collection<StandingDoc>;
  private readonly local = new Map<string, Known>();
  /** Unproven keys with a call on its way in this process: later calls wait for its outcome. */
  private readonly firstCalls = new Map<string, Promise<void>>();

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly options: TenantStandingOptions,
    /** Counts each request answered 403 from the memory of a refusal. */
    private readonly refusedHit: (opcoId: string) => void = () => undefined,
  ) {
    this.docs = store.collection<StandingDoc>('tenant_standing');
  }

  /** What this instance knows now without asking the store; undefined when it must ask. */
  known(opcoId: string | undefined, tenant: string): Standing | undefined {
    const known = this.local.get(localKey(opcoId, tenant));
    if (!known) return undefined;
    const now = this.clock.now();
    if (now >= known.until) return undefined;
    // Read again in the background once due: the answer of the moment is this one, so a cached
    // read never waits for the store (the edge asks here for every request, http/edge.ts).
    if (now >= known.recheckAt && !known.refreshing) {
      known.refreshing = true;
      this.read(opcoId, tenant).catch(() => (known.refreshing = false));
    }
    return known.standing;
  }

  /** The tenant's standing at `opcoId` (or at any opcoId when none is given), read again when due. */
  async of(opcoId: string | undefined, tenant: string): Promise<Standing> {
    const known = this.local.get(localKey(opcoId, tenant));
    const now = this.clock.now();
    if (known && now < known.recheckAt && now < known.until) return known.standing;
    return this.read(opcoId, tenant);
  }

  private async read(opcoId: string | undefined, tenant: string): Promise<Standing> {
    const now = this.clock.now();
    const filter = opcoId === undefined ? { tenant, standing: 'proven' } : { _id: docId(opcoId, tenant) };
    const [doc] = await this.docs.find({ ...filter, expiresAt: { $gt: new Date(now) } }, { limit: 1 });
    const standing: Standing = doc?.standing ?? 'unproven';
    const until = doc ? doc.expiresAt.getTime() : Infinity;
    this.remember(localKey(opcoId, tenant), { standing, until, recheckAt: now + LOCAL_RECHECK_MS });
    return standing;
  }

  /** 403 HTTP_ERROR, answered locally, when the upstream refused this key lately. */
  async assertNotRefused(opcoId: string, tenant: string): Promise<Standing> {
    const standing = this.known(opcoId, tenant) ?? (await this.of(opcoId, tenant));
    if (standing !== 'refused') return standing;
    this.refusedHit(opcoId);
    throw refusedLately(opcoId, this.local.get(localKey(opcoId, tenant))!.until - this.clock.now());
  }

  /**
   * Step 4's view of the key for one call: 403 when refused lately; for an unproven key, one
   * call at a time in this process, the others waiting for its outcome, so a key sent many times
   * at once reaches the upstream once and the rest learn from that answer. `done()` must be
   * called once the call's outcome is stored (or the call gave up).
   */
  async claim(opcoId: string, tenant: string): Promise<{ standing: Standing; done: () => void }> {
    for (;;) {
      const standing = await this.assertNotRefused(opcoId, tenant);
      if (standing === 'proven') return { standing, done: NOTHING };
      const key = localKey(opcoId, tenant);
      const ahead = this.firstCalls.get(key);
      if (!ahead) {
        let finish!: () => void;
        this.firstCalls.set(key, new Promise<void>((resolve) => (finish = resolve)));
        return {
          standing,
          done: () => {
            this.firstCalls.delete(key);
            finish();
          },
        };
      }
      await ahead;
    }
  }

  /**
   * The upstream accepted the key. Written when this instance did not know it proven for at
   * least half its lifetime more: one write a day or so per tenant, not one per call.
   */
  async accepted(opcoId: string, tenant: string): Promise<void> {
    const now = this.clock.now();
    const ttlMs = this.options.provenTtlS * 1000;
    const known = this.local.get(localKey(opcoId, tenant));
    if (known?.standing === 'proven' && known.until - now > ttlMs / 2) return;
    await this.write(opcoId, tenant, 'proven', now + ttlMs);
    this.remember(localKey(ANY_OPCO, tenant), { standing: 'proven', until: now + ttlMs, recheckAt: now + LOCAL_RECHECK_MS });
  }

  /** The upstream refused the key: refused for `refusedTtlS`, and no longer proven. */
  async refused(opcoId: string, tenant: string): Promise<void> {
    await this.write(opcoId, tenant, 'refused', this.clock.now() + this.options.refusedTtlS * 1000);
    // Proven elsewhere perhaps; the next route without an opcoId asks the store again.
    this.local.delete(localKey(ANY_OPCO, tenant));
  }

  /** The index the reads of "proven at any opcoId" need; idempotent. */
  prepare(): Promise<void> {
    return this.docs.createIndex({ tenant: 1 });
  }

  /** Frees the store of standings past their lifetime (readers ignore them already). */
  sweep(): Promise<number> {
    return this.docs.sweepExpired(this.clock.date());
  }

  private async write(opcoId: string, tenant: string, standing: 'proven' | 'refused', until: number): Promise<void> {
    const expiresAt = new Date(until);
    await this.docs.findOneAndUpdate({ _id: docId(opcoId, tenant) }, { $set: { opcoId, tenant, standing, expiresAt } }, { upsert: true });
    this.remember(localKey(opcoId, tenant), { standing, until, recheckAt: this.clock.now() + LOCAL_RECHECK_MS });
  }

  private remember(key: string, known: Known): void {
    this.local.delete(key);
    this.local.set(key, known);
    if (this.local.size > LOCAL_MAX) this.local.delete(this.local.keys().next().value!);
  }
}

function docId(opcoId: string, tenant: string): string {
  // The hash is 64 hex characters: nothing after it can be mistaken for part of it.
  return `${tenant}@${opcoId}`;
}

function localKey(opcoId: string | undefined, tenant: string): string {
  return `${tenant}@${opcoId ?? ANY_OPCO}`;
}

function refusedLately(opcoId: string, remainingMs: number) {
  const seconds = Math.max(1, Math.ceil(remainingMs / 1000));
  return createError('HTTP_ERROR', `upstream ${opcoId} refused this X-API-KEY lately; it is answered here without asking the upstream again for ${seconds} s`);
}
