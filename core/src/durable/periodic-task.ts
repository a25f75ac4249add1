/**
 * Work repeated every `intervalMs` (sweeps, polls): on the kernel's clock, never two runs at once
 * (the next is scheduled when one ends), a failure logged and the next run kept, never keeping
 * the process alive, stopped (waiting for a run in progress) when the kernel closes.
 */
import type { Clock, Timer } from '../clock.js';

export class PeriodicTask {
  private timer: Timer | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

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
    this.schedule();
  }

  /** Runs the task now unless it is running already; resolves when that run ends. */
  runNow(): Promise<void> {
    this.running ??= Promise.resolve()
      .then(() => this.task())
      .then(
        () => undefined,
        (err) => this.onError(err),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running;
  }

  private schedule(): void {
    this.timer = this.clock.setTimeout(() => {
      void this.runNow().then(() => {
        if (!this.stopped) this.schedule();
      });
    }, this.intervalMs);
  }
}
