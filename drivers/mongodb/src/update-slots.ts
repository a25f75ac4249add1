/**
 * A bound on the updates (findAndModify, update) one store has in flight on FerretDB v1.
 *
 * FerretDB v1 on PostgreSQL runs such a command on two connections of its PostgreSQL pool at
 * once: the query that finds the documents holds one until the command ends, and the write takes
 * a second one for its transaction (handler/msg_findandmodify.go, msg_update.go). With as many of
 * them in flight as the pool has connections (`pool_max_conns`: 50 by default, 40 in this
 * repository's CI, 20 in its benches), each holds one and waits for a second that never comes: FerretDB
 * answers no command again, on any connection, until it is restarted. `jobs.prefetch: 32` did it
 * (bench/RESULTS.md). Inserts, finds, counts and deletes take one connection at a time and are
 * not bounded here.
 *
 * The bound is per store (per process): the processes sharing one FerretDB must together stay
 * under its pool (docs/operations.md).
 */
import pLimit, { type LimitFunction } from 'p-limit';

export class UpdateSlots {
  /** FIFO: a slot passes straight to the next update in line. */
  private readonly limit: LimitFunction;

  constructor(readonly size: number) {
    this.limit = pLimit(size);
  }

  run<R>(call: () => Promise<R>): Promise<R> {
    return this.limit(call);
  }
}
