/**
 * A FIFO async mutex. A write of the embedded store reads, changes memory, then awaits its append
 * to the datafile; holding this lock around every write of a collection keeps another write from
 * coming between (findOneAndUpdate, upsert) and keeps the appends in the order of the changes,
 * atomic within the process, which is all the embedded store has to promise.
 */
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` once every task queued before it has settled; a failure does not block the queue. */
  run<R>(task: () => Promise<R>): Promise<R> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves when everything queued so far has settled (used by close). */
  async idle(): Promise<void> {
    await this.tail;
  }
}
