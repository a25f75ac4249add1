/**
 * How many times work is tried and how long to wait between tries, from config (SPEC 3.1, 6.3,
 * 8): jobs and sync batches 3 attempts after 1 s, 2 s; webhook deliveries 4 attempts at 0, 1 s,
 * 5 s, 15 s. The one backoff computation of the code base, in the manner of BullMQ's Backoffs.
 */
export class RetryPolicy {
  /**
   * `delaysMs[i]` is the wait before attempt i + 2 (after the (i + 1)th failed); the last delay
   * repeats when attempts outnumber delays.
   */
  constructor(
    readonly maxAttempts: number,
    private readonly delaysMs: readonly number[],
  ) {
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
      throw new RangeError(`maxAttempts must be an integer >= 1, got ${maxAttempts}`);
    if (delaysMs.length === 0 && maxAttempts > 1)
      throw new RangeError('a retry policy of several attempts needs at least one delay');
  }

  /** After `attemptsMade` failed attempts: the wait before the next one, or null when none is left. */
  nextDelay(attemptsMade: number): number | null {
    if (attemptsMade >= this.maxAttempts) return null;
    return this.delaysMs[Math.min(Math.max(attemptsMade, 1), this.delaysMs.length) - 1] ?? 0;
  }
}
