/**
 * A FIFO async mutex. nedb runs each of its own calls atomically, but a read followed by a write
 * (findOneAndUpdate, upsert) is two calls; holding this lock around every write of a collection
 * makes such pairs atomic within the process, which is all the embedded store has to promise.
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
