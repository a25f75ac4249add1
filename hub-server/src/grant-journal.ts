/**
 * The hub writes every grant to its store before sending it, so that a restarted hub knows what
 * its predecessor handed out in the last window, including grants of instances that have not
 * reconnected yet (D30). Without it a new hub would have to refuse everything for a window and
 * the grant lifetime, since any instance might have spent the whole budget just before the crash.
 *
 * The end of each call is written too, so a restarted hub counts a finished call for a window after
 * its end, not until its `exp`. A record stays until its slot can no longer count (end or `exp`,
 * plus the window), then the sweep deletes it.
 */
import type { Clock, Collection, Store, Timer } from '@opco-proxy/core';
import { leavesWindowAt } from '@opco-proxy/core/limits';
import type { IssuedGrant, JournalGrant } from './grant-scheduler.js';

interface GrantRecord {
  _id: string;
  fleetId: string;
  /** The name of fleetId in records written before the rename (issue 29); read, never written. */
  tenantId?: string;
  opcoId: string;
  instanceId: string;
  issuedAt: number;
  deadline: number;
  limit: number;
  windowMs: number;
  /** Set when the instance reported the call done. */
  endedAt?: number;
  /** Granted to an unproven tenant: a restarted hub counts it in the unproven slice too. */
  unproven?: true;
  expiresAt: Date;
}

const SWEEP_INTERVAL_MS = 60_000;

export class GrantJournal {
  private readonly records: Collection<GrantRecord>;
  private sweeper: Timer | undefined;
  private closed = false;

  constructor(
    store: Store,
    private readonly clock: Clock,
  ) {
    this.records = store.collection<GrantRecord>('hub_grants');
  }

  async record(grant: IssuedGrant): Promise<void> {
    const deadline = grant.exp * 1000;
    await this.records.insertOne({
      _id: grant.grantId,
      fleetId: grant.fleetId,
      opcoId: grant.opcoId,
      instanceId: grant.instanceId,
      issuedAt: grant.issuedAt,
      deadline,
      limit: grant.rateLimit.limit,
      windowMs: grant.rateLimit.windowMs,
      ...(grant.unproven ? { unproven: true } : {}),
      expiresAt: new Date(leavesWindowAt(deadline, grant.rateLimit.windowMs)),
    });
  }

  /**
   * The call ended: the record now expires a window after the end. An unused grant never
   * counted: its record goes. Writes for ids that are not grants (local calls) match nothing.
   */
  async ended(id: string, at: number, windowMs: number, outcome: 'used' | 'unused'): Promise<void> {
    if (outcome === 'unused') await this.records.deleteOne({ _id: id });
    else
      await this.records.updateMany(
        { _id: id },
        { $set: { endedAt: at, expiresAt: new Date(leavesWindowAt(at, windowMs)) } },
      );
  }

  /** Grants whose slots may still count; the sweep starts with it. */
  async load(): Promise<JournalGrant[]> {
    const records = await this.records.find({ expiresAt: { $gt: this.clock.date() } });
    this.armSweep();
    return records.map((r) => ({
      id: r._id,
      fleetId: r.fleetId ?? r.tenantId!,
      opcoId: r.opcoId,
      instanceId: r.instanceId,
      issuedAt: r.issuedAt,
      deadline: r.deadline,
      rateLimit: { limit: r.limit, windowMs: r.windowMs },
      ...(r.endedAt === undefined ? {} : { endedAt: r.endedAt }),
      ...(r.unproven ? { unproven: true } : {}),
    }));
  }

  close(): void {
    this.closed = true;
    this.sweeper?.cancel();
    this.sweeper = undefined;
  }

  private armSweep(): void {
    if (this.closed) return;
    this.sweeper = this.clock.setTimeout(() => {
      void this.records
        .sweepExpired(this.clock.date())
        .catch(() => undefined)
        .finally(() => this.armSweep());
    }, SWEEP_INTERVAL_MS);
  }
}
