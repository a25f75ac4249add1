/**
 * Time limits on broker operations. amqplib waits forever for a reply on a connection that is
 * open but silent (until heartbeats notice, up to two heartbeat periods), and callers of the
 * Queue port need an answer in bounded time (publish: 503 instead of a hung request).
 */

/** Settles like `work`, or rejects with `failure()` once the wall clock passes `deadline` (epoch ms). */
export function withDeadline<T>(work: Promise<T>, deadline: number, failure: () => Error): Promise<T> {
  if (deadline === Infinity) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(failure()), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** A pause that `wake()` ends early (close and cancel must not wait out a reconnection backoff). */
export class Pause {
  private timer: NodeJS.Timeout | undefined;
  private resolve: (() => void) | undefined;

  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  wake(): void {
    clearTimeout(this.timer);
    this.resolve?.();
  }
}
