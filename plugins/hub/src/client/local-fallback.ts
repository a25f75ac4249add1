/**
 * What an instance does without its hub (D12, D30): a LocalBucket per opcoId of
 * `floor(limit / expectedInstances)` (at least 1) calls per window, that waits and never rejects.
 *
 * The rule that keeps the upstream's windows exact across a hub loss: when the hub is lost, the
 * other instances may have been granted the whole budget an instant before, and this instance
 * cannot know. So its first local call for an opcoId comes one window after the later of the loss
 * and the end of its own last granted call (the gate). From then on, every instance spends at most
 * its share per window, and the shares add up to at most the limit.
 *
 * An instance that never had a hub has no gate: it starts serving at once (D30).
 *
 * Calls of unproven tenants (issue 27) share a slice of the bucket, scaled like the limit: each
 * instance takes `floor(unprovenLimit / expectedInstances)` (at least 1, at most its share), so
 * the instances' local slices add up to at most the slice, as their shares add up to at most the
 * limit. Their waiting asks never hold back a proven tenant's (LaneQueue, in core's LocalBucket).
 */
import { setMaxListeners } from 'node:events';
import { type AdmissionRequest, type Clock } from '@opco-proxy/core';
import { leavesWindowAt, LocalBucket } from '@opco-proxy/core/limits';
import type { RateLimit } from '../protocol.js';
import type { UsageLedger } from './usage-ledger.js';

/** Thrown to asks waiting locally when the hub is back: they go and ask it instead. */
export class Rerouted extends Error {
  constructor() {
    super('the hub is connected again');
    this.name = 'Rerouted';
  }
}

const CANCEL_POLL_MS = 250;

export class LocalFallback {
  private readonly buckets = new Map<string, LocalBucket>();
  private lostAt: number | undefined;
  private reroute = rerouteController();

  constructor(
    private readonly clock: Clock,
    private readonly expectedInstances: number,
    private readonly ledger: UsageLedger,
    private readonly cancelledError: () => Error,
  ) {}

  static share(rateLimit: RateLimit, expectedInstances: number): number {
    return Math.max(1, Math.floor(rateLimit.limit / expectedInstances));
  }

  /** This instance's part of the unproven slice (see the file comment). */
  static sliceShare(rateLimit: RateLimit, unprovenLimit: number, expectedInstances: number): number {
    return Math.min(
      LocalFallback.share(rateLimit, expectedInstances),
      Math.max(1, Math.floor(unprovenLimit / expectedInstances)),
    );
  }

  /** The hub connection dropped now. */
  hubLost(): void {
    this.lostAt = this.clock.now();
  }

  /** The hub is back: every ask waiting here leaves for it. */
  hubBack(): void {
    this.reroute.abort(new Rerouted());
    this.reroute = rerouteController();
    for (const bucket of this.buckets.values()) bucket.close(new Rerouted());
  }

  /** The instance is stopping: every waiting ask fails with `err`. */
  close(err: Error): void {
    this.reroute.abort(err);
    for (const bucket of this.buckets.values()) bucket.close(err);
  }

  /** Resolves with the slot's release once the gate is open and the bucket has room. */
  async acquire(request: AdmissionRequest): Promise<() => void> {
    await this.gate(request);
    return this.bucket(request).acquire({
      priority: request.priority,
      tenant: request.tenant,
      proven: request.proven,
      cancelled: request.cancelled,
    });
  }

  /** Asks waiting in the opcoId's bucket. */
  waiting(opcoId: string): number {
    return this.buckets.get(opcoId)?.waiters() ?? 0;
  }

  /** What the opcoId's bucket holds of unproven tenants: calls counted in the window, asks waiting. */
  unproven(opcoId: string): { used: number; waiting: number } {
    const bucket = this.buckets.get(opcoId);
    return { used: bucket?.unprovenUsed() ?? 0, waiting: bucket?.unprovenWaiters() ?? 0 };
  }

  /** When local calls may start for this opcoId (see the file comment). */
  opensAt(opcoId: string, windowMs: number): number {
    if (this.lostAt === undefined) return -Infinity;
    return leavesWindowAt(Math.max(this.lostAt, this.ledger.grantsEndedAt(opcoId)), windowMs);
  }

  private async gate(request: AdmissionRequest): Promise<void> {
    const signal = this.reroute.signal;
    for (;;) {
      const wait = this.opensAt(request.opcoId, request.rateLimit.windowMs) - this.clock.now();
      if (wait <= 0) return;
      await this.clock.sleep(Math.min(wait, CANCEL_POLL_MS), signal); // rejects with Rerouted
      if (
        request.cancelled &&
        (await Promise.resolve()
          .then(request.cancelled)
          .catch(() => false))
      )
        throw this.cancelledError();
    }
  }

  private bucket({ opcoId, rateLimit, unprovenLimit }: AdmissionRequest): LocalBucket {
    const share = LocalFallback.share(rateLimit, this.expectedInstances);
    const slice = LocalFallback.sliceShare(rateLimit, unprovenLimit, this.expectedInstances);
    let bucket = this.buckets.get(opcoId);
    if (!bucket) {
      bucket = new LocalBucket(share, rateLimit.windowMs, this.clock, this.cancelledError, slice);
      this.buckets.set(opcoId, bucket);
    } else {
      bucket.setLimit(share, rateLimit.windowMs, slice);
    }
    return bucket;
  }
}

/** Every ask waiting at the gate listens to it: as many listeners as waiting asks is expected. */
function rerouteController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}
