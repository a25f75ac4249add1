/**
 * The one source of time. Every timestamp and timer in core and plugins goes through a Clock,
 * so tests of retries, leases, expiry, polling and grant lifetimes move time forward instead of
 * sleeping on the real one.
 */

export interface Timer {
  /** Stops the timer; harmless after it fired. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  date(): Date;
  /** Calls `fn` once after `ms`. The timer never keeps the process alive (housekeeping). */
  setTimeout(fn: () => void, ms: number): Timer;
  /** Resolves after `ms`; rejects with the signal's reason if it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/**
 * Sleep on a clock's timer that keeps the process alive (an awaited sleep must, as
 * timers/promises does; housekeeping timers must not), shared by both clocks so they abort the
 * same way.
 */
function sleepWith(schedule: (fn: () => void, ms: number) => Timer, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      timer.cancel();
      reject(abortReason(signal!));
    };
    const timer = schedule(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function realTimer(fn: () => void, ms: number, keepAlive: boolean): Timer {
  const handle = setTimeout(fn, Math.max(0, ms));
  if (!keepAlive) handle.unref();
  return { cancel: () => clearTimeout(handle) };
}

export const systemClock: Clock = {
  now: () => Date.now(),
  date: () => new Date(),
  setTimeout: (fn, ms) => realTimer(fn, ms, false),
  sleep: (ms, signal) => sleepWith((fn, delay) => realTimer(fn, delay, true), ms, signal),
};

interface PendingTimer {
  dueAt: number;
  fn: () => void;
  handle: NodeJS.Timeout | undefined;
  /** A sleep's timer holds the process while real time flows; a frozen clock's holds nothing (only advance() moves it). */
  keepAlive: boolean;
}

/**
 * A clock for tests: `advance(ms)` jumps ahead, firing at once every timer that has become due.
 * Code under test that waits 15 s for a webhook retry is therefore driven by the test in
 * microseconds, while everything that does not look at the clock (sockets, the event loop)
 * behaves as usual. By default real time keeps flowing underneath; a `frozen` clock moves only
 * when advanced, so a test can show that something happens exactly when due, not a moment early.
 */
export class TestClock implements Clock {
  private offset = 0;
  private readonly timers = new Set<PendingTimer>();
  private readonly frozenAt: number | undefined;

  constructor(options: { frozen?: boolean } = {}) {
    this.frozenAt = options.frozen ? Date.now() : undefined;
  }

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offset;
  }

  date(): Date {
    return new Date(this.now());
  }

  setTimeout(fn: () => void, ms: number): Timer {
    return this.schedule(fn, ms, false);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith((fn, delay) => this.schedule(fn, delay, true), ms, signal);
  }

  private schedule(fn: () => void, ms: number, keepAlive: boolean): Timer {
    const timer: PendingTimer = { dueAt: this.now() + Math.max(0, ms), fn, handle: undefined, keepAlive };
    // A frozen clock's timers ring only when advanced past them (or at once when already due).
    if (this.frozenAt === undefined || ms <= 0) this.arm(timer, this.frozenAt === undefined ? Math.max(0, ms) : 0);
    this.timers.add(timer);
    return { cancel: () => this.drop(timer) };
  }

  private arm(timer: PendingTimer, ms: number): void {
    timer.handle = setTimeout(() => this.fire(timer), ms);
    if (!timer.keepAlive) timer.handle.unref();
  }

  /** Moves time forward by `ms`, fires what became due (earliest first), then lets callbacks run. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) throw new RangeError(`advance() needs a duration >= 0, got ${ms}`);
    this.offset += ms;
    const now = this.now();
    const due = [...this.timers].filter((t) => t.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt);
    for (const timer of this.timers) {
      if (timer.dueAt <= now || this.frozenAt !== undefined) continue;
      // Still in the future: its real timer must now ring at the remaining virtual delay.
      clearTimeout(timer.handle);
      this.arm(timer, timer.dueAt - now);
    }
    for (const timer of due) this.fire(timer);
    await new Promise((resolve) => setImmediate(resolve));
  }

  /** Timers not yet fired, for tests that check nothing is left scheduled. */
  pending(): number {
    return this.timers.size;
  }

  private fire(timer: PendingTimer): void {
    if (!this.timers.has(timer)) return;
    this.drop(timer);
    timer.fn();
  }

  private drop(timer: PendingTimer): void {
    if (timer.handle) clearTimeout(timer.handle);
    this.timers.delete(timer);
  }
}

/**
 * Waits for `work` until the clock reaches `deadline`: resolves true when the work settled in
 * time, false when the deadline came first. The deadline's timer is dropped either way, so a
 * stopping process is never kept alive by it.
 */
export async function settlesBy(clock: Clock, deadline: number, work: Promise<unknown> | undefined): Promise<boolean> {
  if (!work) return true;
  let timer: Timer | undefined;
  const late = new Promise<false>((resolve) => {
    timer = clock.setTimeout(() => resolve(false), Math.max(0, deadline - clock.now()));
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    timer?.cancel();
  }
}
