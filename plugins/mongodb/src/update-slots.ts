/**
 * A bound on the updates (findAndModify, update) one store has in flight on FerretDB v1.
 *
 * FerretDB v1 on PostgreSQL runs such a command on two connections of its PostgreSQL pool at
 * once: the query that finds the documents holds one until the command ends, and the write takes
 * a second one for its transaction (handler/msg_findandmodify.go, msg_update.go). With as many of
 * them in flight as the pool has connections (`pool_max_conns`: 50 by default, 20 in this
 * repository's CI and benches), each holds one and waits for a second that never comes: FerretDB
 * answers no command again, on any connection, until it is restarted. `jobs.prefetch: 32` did it
 * (bench/RESULTS.md). Inserts, finds, counts and deletes take one connection at a time and are
 * not bounded here.
 *
 * The bound is per store (per process): the processes sharing one FerretDB must together stay
 * under its pool (docs/operations.md).
 */
export class UpdateSlots {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`update concurrency must be a positive integer, not ${limit}`);
  }

  async run<R>(call: () => Promise<R>): Promise<R> {
    if (this.inFlight >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    try {
      return await call();
    } finally {
      // The slot passes straight to the next in line (FIFO), or is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }
}
