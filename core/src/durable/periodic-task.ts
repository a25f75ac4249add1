/**
 * Work repeated every `intervalMs` (sweeps, polls): on the kernel's clock, never two runs at once
 * (the next is scheduled when one ends), a failure logged and the next run kept, never keeping
 * the process alive, stopped (waiting for a run in progress) when the kernel closes.
 *
 * A task that knows when it next has work answers `{nextRunInMs}` (NextRun), and its next run
 * waits that long instead of `intervalMs`: an idle worker then sends the store nothing until then
 * (issue 11). `wake()` runs it at once when work arrives in this process meanwhile.
 */
import type { Clock, Timer } from '../clock.js';

/** What a periodic task may answer: how long its next run can wait. */
export interface NextRun {
  nextRunInMs: number;
}

export class PeriodicTask {
  private timer: Timer | undefined;
  private running: Promise<number | undefined> | undefined;
  private stopped = true;
  /** A wake() came during a run, which may have looked for work before it arrived. */
  private wokenWhileRunning = false;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(this.intervalMs);
  }

  /** Work arrived: the task runs now, or again as soon as its run in progress ends. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wokenWhileRunning = true;
      return;
    }
    this.timer?.cancel();
    this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  /** Runs the task unless it is running already; resolves the delay it asked for before its next run, if it asked. */
  private run(): Promise<number | undefined> {
    this.running ??= Promise.resolve()
      .then(() => this.task())
      .then(
        (answer) => nextRunInMs(answer),
        (err) => {
          this.onError(err);
          return undefined;
        },
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private tick(): void {
    this.timer = undefined;
    void this.run().then((delayMs) => {
      if (this.stopped) return;
      const again = this.wokenWhileRunning;
      this.wokenWhileRunning = false;
      this.schedule(again ? 0 : (delayMs ?? this.intervalMs));
    });
  }

  private schedule(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => this.tick(), delayMs);
  }
}

function nextRunInMs(answer: unknown): number | undefined {
  const delay = (answer as Partial<NextRun> | null | undefined)?.nextRunInMs;
  return typeof delay === 'number' && Number.isFinite(delay) ? Math.max(0, delay) : undefined;
}
