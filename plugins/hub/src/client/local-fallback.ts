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
 */
import { setMaxListeners } from 'node:events';
import { LocalBucket, type AdmissionRequest, type Clock } from '@opco-proxy/core';
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
    return this.bucket(request.opcoId, request.rateLimit).acquire({
      priority: request.priority,
      tenant: request.tenant,
      cancelled: request.cancelled,
    });
  }

  /** Asks waiting in the opcoId's bucket. */
  waiting(opcoId: string): number {
    return this.buckets.get(opcoId)?.waiters() ?? 0;
  }

  /** When local calls may start for this opcoId (see the file comment). */
  opensAt(opcoId: string, windowMs: number): number {
    if (this.lostAt === undefined) return -Infinity;
    return Math.max(this.lostAt, this.ledger.grantsEndedAt(opcoId)) + windowMs;
  }

  private async gate(request: AdmissionRequest): Promise<void> {
    const signal = this.reroute.signal;
    for (;;) {
      const wait = this.opensAt(request.opcoId, request.rateLimit.windowMs) - this.clock.now();
      if (wait <= 0) return;
      await this.clock.sleep(Math.min(wait, CANCEL_POLL_MS), signal); // rejects with Rerouted
      if (request.cancelled && (await Promise.resolve().then(request.cancelled).catch(() => false))) throw this.cancelledError();
    }
  }

  private bucket(opcoId: string, rateLimit: RateLimit): LocalBucket {
    const share = LocalFallback.share(rateLimit, this.expectedInstances);
    let bucket = this.buckets.get(opcoId);
    if (!bucket) {
      bucket = new LocalBucket(share, rateLimit.windowMs, this.clock, this.cancelledError);
      this.buckets.set(opcoId, bucket);
    } else {
      bucket.setLimit(share, rateLimit.windowMs);
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
