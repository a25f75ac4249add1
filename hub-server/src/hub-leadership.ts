/**
 * Hub failover (issue 31): two hubs on one shared MongoDB store, one leading under a lease, the
 * other standing by. The lease is one record of the store, `hub_leader/hub-leader`, taken,
 * renewed and released through core's LeasedRecords, the one way durable things are leased: its
 * claim and its writes under a token are the store port's atomic findOneAndUpdate, which the
 * MongoDB driver makes atomic on FerretDB v1 too (drivers/mongodb document-locks.ts).
 *
 * Never two leaders granting: a leader counts its lease as ending `margin` before the date it
 * wrote (`leaseUntil`), and grants nothing after that unless a renewal came back in time. A
 * standby can take the lease only once `leaseUntil` has passed, and loads the grant journal after
 * taking it; every grant the old leader sent was journalled before its lease ended (see
 * `granting`), so the new leader counts it. The margin also absorbs a small skew between the
 * hubs' clocks (keep them in NTP sync).
 */
import { hostname } from 'node:os';
import { randomHex, type Clock, type Collection, type Logger, type Store, type Timer } from '@opco-proxy/core';
import { LeasedRecords, LeaseLost, unleased, type Leased } from '@opco-proxy/core/durable';

export const LEADER_RECORD = 'hub-leader';
export const DEFAULT_LEASE_MS = 10_000;
export const DEFAULT_RENEW_MS = 3000;

export interface LeaderRecord extends Leased {
  holderId: string | null;
  holderUrl: string | null;
}

export type HubRole = 'leader' | 'standby';

/** What /health and GET /admin/limits say about leadership. */
export interface LeadershipView {
  role: HubRole;
  /** This hub. */
  id: string;
  /** The hub holding the lease as last seen (this one when leading); null when none does. */
  leader: { id: string; url: string | null; expiresAt: string | null } | null;
}

/** What the hub asks of its leadership, with failover (HubLeadership) or alone (soloLeadership). */
export interface Leadership {
  start(): Promise<void>;
  /** Whether this hub may grant now: checked before each upgrade and before each grant is sent. */
  granting(): boolean;
  view(): LeadershipView;
  close(): Promise<void>;
}

/** A hub without `failover` leads from its start to its end, with no lease. */
export function soloLeadership(id: string, url: () => string, lead: () => Promise<void>): Leadership {
  return {
    start: lead,
    granting: () => true,
    view: () => ({ role: 'leader', id, leader: { id, url: url() || null, expiresAt: null } }),
    close: () => Promise.resolve(),
  };
}

/** `<host>-<pid>-<random>`: a restarted hub is another hub, so its lease is never mistaken for the old one's. */
export function hubId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 80) || 'hub';
  return `${host}-${process.pid}-${randomHex(3)}`;
}

export interface LeadershipOptions {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This hub's id, in the lease's tokens and views. */
  id: string;
  /** This hub's address as instances reach it. */
  url: string | null;
  leaseMs: number;
  renewMs: number;
  /** Called on taking the lease; nothing is granted before it resolves. A rejection steps down. */
  lead(): Promise<void>;
  /** Called once the lease is lost or given up: stop granting at once. */
  stepDown(reason: string): void;
}

/** How long before the lease's end a leader stops granting (clock skew, a late timer). */
export function leaseMargin(leaseMs: number): number {
  return Math.min(1000, Math.floor(leaseMs / 10));
}

export class HubLeadership implements Leadership {
  private readonly records: LeasedRecords<LeaderRecord>;
  private readonly collection: Collection<LeaderRecord>;
  private readonly margin: number;
  private role: HubRole = 'standby';
  /** The lease's token while this hub holds it. */
  private token: string | undefined;
  /** The end of the lease as written; grants stop `margin` before it. */
  private leaseUntil = 0;
  private ready = false;
  private seen: LeadershipView['leader'] = null;
  private tick: Timer | undefined;
  private deadline: Timer | undefined;
  private closed = false;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeadershipOptions) {
    this.collection = options.store.collection<LeaderRecord>('hub_leader');
    this.records = new LeasedRecords(this.collection, options.clock, options.id);
    this.margin = leaseMargin(options.leaseMs);
  }

  /** Creates the record if missing and makes the first attempt before resolving. */
  async start(): Promise<void> {
    await this.collection.insertMany([
      { _id: LEADER_RECORD, ...unleased(new Date(0)), holderId: null, holderUrl: null },
    ]);
    await this.step();
  }

  /** True while this hub leads, has loaded what it needs, and its lease has not run out. */
  granting(): boolean {
    return this.role === 'leader' && this.ready && this.options.clock.now() < this.leaseUntil - this.margin;
  }

  view(): LeadershipView {
    return { role: this.role, id: this.options.id, leader: this.seen };
  }

  /** Resolves once the attempt under way (take or renew) has ended: for tests on a frozen clock. */
  idle(): Promise<void> {
    return this.running;
  }

  /** Stops trying; a leader releases the lease so the standby takes it at its next attempt. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.tick?.cancel();
    await this.running.catch(() => undefined);
    const token = this.token;
    this.stepDown('hub stopping');
    if (token)
      await this.records.release(LEADER_RECORD, token, { holderId: null, holderUrl: null }).catch(() => undefined);
  }

  /** One attempt (take or renew), then the next one is scheduled. */
  private step(): Promise<void> {
    this.running = (this.role === 'leader' ? this.renew() : this.take())
      .catch((err: Error) =>
        this.options.log.warn({ error: err.message, role: this.role }, 'hub lease: the store did not answer'),
      )
      .finally(() => this.schedule());
    return this.running;
  }

  private schedule(): void {
    if (this.closed) return;
    let delay = this.options.renewMs;
    // A standby tries again the moment the lease it saw runs out (a dead leader's), not up to renewMs later.
    const expiresAt = this.seen?.expiresAt ? Date.parse(this.seen.expiresAt) : undefined;
    if (this.role === 'standby' && expiresAt !== undefined)
      delay = Math.max(10, Math.min(delay, expiresAt - this.options.clock.now() + 10));
    this.tick = this.options.clock.setTimeout(() => void this.step(), delay);
  }

  private async take(): Promise<void> {
    const claimed = await this.records.claim({ _id: LEADER_RECORD }, this.options.leaseMs, {
      set: { holderId: this.options.id, holderUrl: this.options.url },
    });
    if (!claimed) {
      const record = await this.collection.findOne({ _id: LEADER_RECORD });
      this.seen =
        record?.holderId && record.leaseUntil
          ? { id: record.holderId, url: record.holderUrl, expiresAt: record.leaseUntil.toISOString() }
          : null;
      return;
    }
    if (this.closed)
      return void (await this.records.release(LEADER_RECORD, claimed.token, { holderId: null, holderUrl: null }));
    this.token = claimed.token;
    this.role = 'leader';
    this.ready = false;
    this.extend(claimed.record.leaseUntil!);
    this.options.log.info(
      { id: this.options.id, leaseUntil: claimed.record.leaseUntil, takenOver: claimed.takenOver },
      'this hub took the leader lease',
    );
    try {
      await this.options.lead();
      // The lease may have run out while the journal loaded: what lead() set up goes again.
      if (this.role === 'leader') this.ready = true;
      else this.options.stepDown('the lease ran out while this hub started leading');
    } catch (err) {
      this.options.log.error({ error: (err as Error).message }, 'the hub could not start leading');
      const token = this.token;
      this.stepDown('could not start leading');
      if (token) await this.records.release(LEADER_RECORD, token, { holderId: null, holderUrl: null });
    }
  }

  private async renew(): Promise<void> {
    const token = this.token!;
    try {
      const renewed = await this.records.update(LEADER_RECORD, token, {}, { renewMs: this.options.leaseMs });
      if (this.token === token) this.extend(renewed.leaseUntil!);
    } catch (err) {
      if (!(err instanceof LeaseLost)) throw err;
      if (this.token === token) this.stepDown('another hub holds the lease');
    }
  }

  /** The lease now runs until `until`; a leader that cannot renew by then steps down. */
  private extend(until: Date): void {
    this.leaseUntil = until.getTime();
    this.seen = { id: this.options.id, url: this.options.url, expiresAt: until.toISOString() };
    this.deadline?.cancel();
    this.deadline = this.options.clock.setTimeout(
      () => {
        if (this.role === 'leader') this.stepDown('the lease could not be renewed in time');
      },
      Math.max(0, this.leaseUntil - this.margin - this.options.clock.now()),
    );
  }

  private stepDown(reason: string): void {
    this.deadline?.cancel();
    this.token = undefined;
    if (this.role !== 'leader') return;
    this.role = 'standby';
    this.ready = false;
    this.seen = null;
    this.options.log.warn({ id: this.options.id, reason }, 'this hub stepped down: it no longer grants');
    this.options.stepDown(reason);
  }
}
