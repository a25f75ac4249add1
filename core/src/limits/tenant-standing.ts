/**
 * What the upstream has said of a tenant's key, per opcoId (issue 27, docs/decisions.md P13).
 * Only the upstream knows which X-API-KEYs are real, so the service learns it from the answers:
 *
 * - **proven**: the upstream answered the key with something that shows it accepted it (a 2xx,
 *   or a 4xx about the request itself: not found, invalid input), within `provenTtlS`;
 * - **refused**: the upstream refused the key within `refusedTtlS`: the service answers 403 itself
 *   meanwhile, spending no budget, then lets it try again (a key the OPCO renewed works again).
 *   A refusal is confirmed (issue 37) by an answer the profile's `keyRefusal` recognises, by any
 *   403 to a key never accepted (the stranger's case), or by `forbiddenInARow` 403s to distinct
 *   requests of a proven key with no accepted answer between them: an upstream may refuse one
 *   dossier that is not the CFA's while the key itself is fine, and that must not lock it out;
 * - **unproven**: neither. Its calls share a slice of each window's budget (admission): a wide one
 *   while strangers are not about, the narrow `unprovenShare` for `strangersRememberedS` after an
 *   unproven key was refused at that opcoId (`strangersLately`).
 *
 * Kept in the store (collection `tenant_standing`, one document per opcoId and tenant hash, with
 * an `expiresAt`) so every instance knows; each instance keeps what it read for
 * `LOCAL_RECHECK_MS` at most, so a refusal one instance learns reaches the others within that.
 */
import { createError } from '../errors/errors.js';
import type { Clock } from '../clock.js';
import type { Collection, Store } from '../ports/store.js';

export type Standing = 'proven' | 'unproven' | 'refused';

export interface TenantStandingOptions {
  provenTtlS: number;
  refusedTtlS: number;
  /** 403s to distinct requests of a proven key, none accepted between them, that confirm a refusal (default 3). */
  forbiddenInARow?: number;
  /** How long the refusal of an unproven key keeps the unproven slice narrow at its opcoId (default 600). */
  strangersRememberedS?: number;
}

/** What the service learns when it holds a key refused: the tenant's stored work may be dropped. */
export type RefusalListener = (refusal: { opcoId: string; tenant: string; wasProven: boolean }) => void;

interface StandingDoc {
  _id: string;
  opcoId: string;
  tenant: string;
  standing: 'proven' | 'refused';
  expiresAt: Date;
  /** Proven keys: the requests refused with a 403 since the last accepted answer (fingerprints). */
  forbidden?: string[];
}

interface Known {
  standing: Standing;
  /** When the store's answer stops being true (its expiresAt), ms. */
  until: number;
  /** When this instance reads the store again, ms. */
  recheckAt: number;
  /** A read of the store is on its way for it. */
  refreshing?: boolean;
  /** Proven: the requests refused with a 403 since the last accepted answer, as last read or written. */
  forbidden?: string[];
}

/** How long an instance trusts what it read before reading the store again. */
export const LOCAL_RECHECK_MS = 10_000;
/** Standings past their lifetime are never read; sweeping them (workers) only frees the store. */
export const STANDING_SWEEP_MS = 10 * 60_000;
/** Standings remembered per instance; the least recently used are forgotten first. */
const LOCAL_MAX = 20_000;
/** The key of "proven at some opcoId", for routes that name none (webhooks, sync, pollers). */
const ANY_OPCO = '*';
/** The document of an opcoId saying an unproven key was refused there lately (not a tenant hash). */
const STRANGERS = 'strangers';
const NOTHING = () => undefined;

export class TenantStanding {
  private readonly docs: Collection<StandingDoc>;
  private readonly local = new Map<string, Known>();
  /** Unproven keys with a call on its way in this process: later calls wait for its outcome. */
  private readonly firstCalls = new Map<string, Promise<void>>();

  private readonly refusalListeners: RefusalListener[] = [];

  constructor(
    store: Store,
    private readonly clock: Clock,
    private readonly options: TenantStandingOptions,
    /** Counts each request answered 403 from the memory of a refusal. */
    private readonly refusedHit: (opcoId: string) => void = () => undefined,
  ) {
    this.docs = store.collection<StandingDoc>('tenant_standing');
  }

  /** Called after each refusal is stored (the holdings drop what a refused stranger stored). */
  onRefusal(listener: RefusalListener): void {
    this.refusalListeners.push(listener);
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
    this.remember(localKey(opcoId, tenant), {
      standing,
      until,
      recheckAt: now + LOCAL_RECHECK_MS,
      forbidden: doc?.forbidden,
    });
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
   * least half its lifetime more, or knew 403s of it since its last accepted answer: one write a
   * day or so per tenant, not one per call.
   */
  async accepted(opcoId: string, tenant: string): Promise<void> {
    const now = this.clock.now();
    const ttlMs = this.options.provenTtlS * 1000;
    const known = this.local.get(localKey(opcoId, tenant));
    if (known?.standing === 'proven' && known.until - now > ttlMs / 2 && !known.forbidden?.length) return;
    await this.write(opcoId, tenant, 'proven', now + ttlMs);
    this.remember(localKey(ANY_OPCO, tenant), {
      standing: 'proven',
      until: now + ttlMs,
      recheckAt: now + LOCAL_RECHECK_MS,
    });
  }

  /**
   * The upstream answered a 403 that does not say the key is unknown. A key never accepted is
   * refused at once (a stranger's key, answered 403 locally from now on); a proven one only once
   * `forbiddenInARow` distinct requests were refused with no accepted answer between them. Answers
   * whether the key is now held refused.
   */
  async forbidden(opcoId: string, tenant: string, request: string, wasProven: boolean): Promise<boolean> {
    if (!wasProven) {
      await this.refused(opcoId, tenant, false);
      return true;
    }
    const [doc] = await this.docs.find(
      { _id: docId(opcoId, tenant), expiresAt: { $gt: this.clock.date() } },
      { limit: 1 },
    );
    if (doc?.standing === 'refused') return true;
    const series = [...new Set([...(doc?.forbidden ?? []), request])];
    if (series.length >= (this.options.forbiddenInARow ?? 3)) {
      await this.refused(opcoId, tenant, true);
      return true;
    }
    const until = doc ? doc.expiresAt.getTime() : this.clock.now() + this.options.provenTtlS * 1000;
    await this.write(opcoId, tenant, 'proven', until, series);
    return false;
  }

  /** The upstream refused the key: refused for `refusedTtlS`, and no longer proven. */
  async refused(opcoId: string, tenant: string, wasProven: boolean): Promise<void> {
    const now = this.clock.now();
    await this.write(opcoId, tenant, 'refused', now + this.options.refusedTtlS * 1000);
    // Proven elsewhere perhaps; the next route without an opcoId asks the store again.
    this.local.delete(localKey(ANY_OPCO, tenant));
    if (!wasProven) await this.strangerSeen(opcoId, now);
    for (const listener of this.refusalListeners) listener({ opcoId, tenant, wasProven });
  }

  /**
   * Whether an unproven key was refused at `opcoId` within `strangersRememberedS`, on any
   * instance: strangers are about, and unproven calls keep to the narrow slice.
   */
  async strangersLately(opcoId: string): Promise<boolean> {
    return (this.known(opcoId, STRANGERS) ?? (await this.of(opcoId, STRANGERS))) === 'refused';
  }

  /** Keeps strangers' presence known for `strangersRememberedS`; written at most once per half of it. */
  private async strangerSeen(opcoId: string, now: number): Promise<void> {
    const rememberedMs = (this.options.strangersRememberedS ?? 600) * 1000;
    const known = this.local.get(localKey(opcoId, STRANGERS));
    if (known?.standing === 'refused' && known.until - now > rememberedMs / 2) return;
    await this.write(opcoId, STRANGERS, 'refused', now + rememberedMs);
  }

  /** The index the reads of "proven at any opcoId" need; idempotent. */
  prepare(): Promise<void> {
    return this.docs.createIndex({ tenant: 1 });
  }

  /** Frees the store of standings past their lifetime (readers ignore them already). */
  sweep(): Promise<number> {
    return this.docs.sweepExpired(this.clock.date());
  }

  private async write(
    opcoId: string,
    tenant: string,
    standing: 'proven' | 'refused',
    until: number,
    forbidden?: string[],
  ): Promise<void> {
    const expiresAt = new Date(until);
    const update = forbidden
      ? { $set: { opcoId, tenant, standing, expiresAt, forbidden } }
      : { $set: { opcoId, tenant, standing, expiresAt }, $unset: { forbidden: '' } };
    await this.docs.findOneAndUpdate({ _id: docId(opcoId, tenant) }, update, { upsert: true });
    this.remember(localKey(opcoId, tenant), {
      standing,
      until,
      recheckAt: this.clock.now() + LOCAL_RECHECK_MS,
      forbidden,
    });
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
  return createError(
    'HTTP_ERROR',
    `upstream ${opcoId} refused this X-API-KEY lately; it is answered here without asking the upstream again for ${seconds} s`,
  );
}
