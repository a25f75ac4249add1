/**
 * The effective limit of one budget (SPEC 1.1 step 9, D29), moved by the 60-second metrics
 * windows its instances report. It changes only in `step()`, which the scheduler calls every
 * `intervalMs` on its Clock, so a test drives it by advancing a TestClock.
 *
 * - Upstream 429s seen since the last step, or an error rate at or above `errorRateThreshold`
 *   and higher than at the last step: multiply by `decreaseFactor` (never below `minFraction`
 *   of the configured limit). The upstream tells us its real budget is smaller than ours.
 * - No 429 in any reported window, and an error rate under the threshold: add
 *   `increaseFraction` of the configured limit, up to the configured limit. Reports are 60-second
 *   windows, so after a 429 the limit stays down for a whole window before it climbs back.
 * - Otherwise (429s still in the window, or errors high but not rising): hold.
 */
import type { MetricsReport } from '@opco-proxy/plugin-hub';

export interface AdaptiveOptions {
  /** Time between two steps. */
  intervalMs: number;
  decreaseFactor: number;
  increaseFraction: number;
  minFraction: number;
  errorRateThreshold: number;
  /** Fewer requests than this in the summed windows: the error rate is noise and ignored. */
  minRequests: number;
}

export const DEFAULT_ADAPTIVE: AdaptiveOptions = {
  intervalMs: 5000,
  decreaseFactor: 0.5,
  increaseFraction: 0.1,
  minFraction: 0.1,
  errorRateThreshold: 0.25,
  minRequests: 10,
};

export type StepResult = 'decreased' | 'increased' | 'held';

export class AdaptiveLimit {
  private readonly windows = new Map<string, MetricsReport>();
  private new429 = 0;
  private lastErrorRate = 0;
  private current: number;

  constructor(
    private configured: number,
    private readonly options: AdaptiveOptions = DEFAULT_ADAPTIVE,
  ) {
    this.current = configured;
  }

  get effective(): number {
    return this.current;
  }

  get floor(): number {
    return Math.max(1, Math.ceil(this.configured * this.options.minFraction));
  }

  /** An instance's latest window; 429s beyond its previous window are new ones. */
  observe(instanceId: string, report: MetricsReport): void {
    const previous = this.windows.get(instanceId);
    this.new429 += Math.max(0, report.rateLimited - (previous?.rateLimited ?? 0));
    this.windows.set(instanceId, report);
  }

  /** The instance went away: its window no longer speaks for the upstream. */
  forget(instanceId: string): void {
    this.windows.delete(instanceId);
  }

  /**
   * A new configured limit (reload). An unadapted limit follows it; an adapted one keeps its
   * place, clamped into the new bounds, so a lowered limit applies at once.
   */
  setConfigured(limit: number): void {
    const wasFull = this.current === this.configured;
    this.configured = limit;
    this.current = wasFull ? limit : Math.min(limit, Math.max(this.floor, this.current));
  }

  step(): StepResult {
    const total = this.summed();
    const errorRate = total.requests >= this.options.minRequests ? total.errors / total.requests : 0;
    const errorsRising = errorRate >= this.options.errorRateThreshold && errorRate > this.lastErrorRate;
    const saw429 = this.new429 > 0;
    this.new429 = 0;
    this.lastErrorRate = errorRate;
    if (saw429 || errorsRising) {
      const lowered = Math.max(this.floor, Math.floor(this.current * this.options.decreaseFactor));
      const changed = lowered < this.current;
      this.current = lowered;
      return changed ? 'decreased' : 'held';
    }
    if (total.rateLimited === 0 && errorRate < this.options.errorRateThreshold && this.current < this.configured) {
      const stepSize = Math.max(1, Math.ceil(this.configured * this.options.increaseFraction));
      this.current = Math.min(this.configured, this.current + stepSize);
      return 'increased';
    }
    return 'held';
  }

  private summed(): { requests: number; errors: number; rateLimited: number } {
    const total = { requests: 0, errors: 0, rateLimited: 0 };
    for (const window of this.windows.values()) {
      total.requests += window.requests;
      total.errors += window.errors;
      total.rateLimited += window.rateLimited;
    }
    return total;
  }
}
