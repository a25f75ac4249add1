/**
 * A budget of `limit` upstream calls per rolling `windowMs` kept in this process, that waits and
 * never rejects (D12, D30: the hub's fallback when it is unreachable), on the one rolling window
 * (rolling-window.ts). Waiting asks are served in FairQueue order (D11).
 *
 * Calls of unproven tenants (issue 27) count against `unprovenLimit` too, the slice of each window
 * they share: a flood of invented keys takes that slice and no more, and its asks waiting for the
 * slice never hold back a proven tenant's (LaneQueue). Proven calls may use the whole budget.
 */
import type { Clock, Timer } from '../clock.js';
import { LaneQueue } from './fair-queue.js';
import { RollingWindow } from './rolling-window.js';

export interface BucketAsk {
  priority: number;
  tenant: string;
  /** False when the upstream has not accepted the tenant's key lately: counted in the unproven slice. Absent: proven. */
  proven?: boolean;
  /** Polled while waiting; once true the ask is dropped and `acquire` rejects with `cancelledError`. */
  cancelled?: () => boolean | Promise<boolean>;
}

interface Waiter extends BucketAsk {
  proven: boolean;
  grant(release: () => void): void;
  fail(err: unknown): void;
}

/** How often a waiting ask checks whether its work was cancelled. */
const CANCEL_POLL_MS = 250;

export class LocalBucket {
  private readonly window: RollingWindow;
  private readonly waiting = new LaneQueue<Waiter>();
  private wake: Timer | undefined;

  constructor(
    private limit: number,
    windowMs: number,
    private readonly clock: Clock,
    private readonly cancelledError: () => Error = () => new Error('cancelled while waiting for upstream budget'),
    /** Calls per window unproven tenants may make together; the whole limit unless given. */
    private unprovenLimit = limit,
  ) {
    this.window = new RollingWindow(windowMs);
  }

  /** Resolves with the slot's release function once a slot is free; never rejects for lack of budget. */
  acquire(ask: BucketAsk): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { ...ask, proven: ask.proven !== false, grant: resolve, fail: reject };
      this.waiting.push(waiter);
      if (ask.cancelled) void this.watchCancellation(waiter);
      this.serve();
    });
  }

  /** Calls admitted and not yet ended, plus ended ones still inside the window. */
  used(): number {
    return this.window.occupied(this.clock.now());
  }

  /** The same, for the calls of unproven tenants. */
  unprovenUsed(): number {
    return this.window.unprovenOccupied(this.clock.now());
  }

  waiters(): number {
    return this.waiting.size;
  }

  unprovenWaiters(): number {
    return this.waiting.unprovenSize;
  }

  /** New limits apply to the next admissions; calls in flight keep their slots. */
  setLimit(limit: number, windowMs: number, unprovenLimit = limit): void {
    this.limit = limit;
    this.window.windowMs = windowMs;
    this.unprovenLimit = unprovenLimit;
    this.serve();
  }

  /** Rejects every waiting ask (the process is stopping). */
  close(err: Error): void {
    this.wake?.cancel();
    for (const waiter of this.waiting.drain()) waiter.fail(err);
  }

  private serve(): void {
    const now = this.clock.now();
    while (this.window.occupied(now) < this.limit) {
      const waiter = this.waiting.shift(this.window.unprovenOccupied(now) < this.unprovenLimit);
      if (!waiter) break;
      const unproven = !waiter.proven;
      this.window.hold(unproven);
      let released = false;
      waiter.grant(() => {
        if (released) return;
        released = true;
        this.window.end(this.clock.now(), unproven);
        this.serve();
      });
    }
    this.scheduleWake();
  }

  /**
   * When asks wait for the window to move, wake when its oldest call leaves it (for asks waiting
   * on the unproven slice that may be early: serving again finds out and waits for the next).
   */
  private scheduleWake(): void {
    this.wake?.cancel();
    this.wake = undefined;
    const leaveAt = this.window.nextLeaveAt();
    if (this.waiting.size === 0 || leaveAt === undefined) return;
    this.wake = this.clock.setTimeout(() => this.serve(), Math.max(1, leaveAt - this.clock.now()));
  }

  private async watchCancellation(waiter: Waiter): Promise<void> {
    const waits = () => this.waiting.includes(waiter);
    while (waits()) {
      await this.clock.sleep(CANCEL_POLL_MS);
      if (!waits()) return; // served, or drained by close()
      const stop = await Promise.resolve()
        .then(() => waiter.cancelled!())
        .catch(() => false);
      if (stop && this.waiting.remove(waiter)) return waiter.fail(this.cancelledError());
    }
  }
}
