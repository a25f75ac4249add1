// Issue 11, point 4: what one single-step job costs the store and the queue, counted by the
// MongoDB driver's command monitoring on the real server (FerretDB in CI) and on real RabbitMQ.
// With `atomicity: 'server'` the store sends exactly what it sends to MongoDB; FerretDB's lock
// workaround (document-locks.ts) is counted apart and only reported.
import t from 'tap';
import { countedBackends, jobRoundTrips, realBackendsSkip } from '../src/index.js';

/**
 * Issue 11: at most 6 store round trips and 2 queue operations (publish, ack) per single-step job,
 * the upstream budget's included: the job's own writes and reads (submission, claim, the write
 * that ends it, the webhook outbox, the note that its event went out) and the budget's slot claim
 * (the default admission provider; none with the hub). The slot is stamped again only when the
 * call outlasts the claim's allowance, which a call to the sandbox on a frozen clock never does.
 * Beside them, issue 28 (D32) adds the submission's audit record: exactly one insert, counted apart.
 */
const MAX_STORE_COMMANDS = 6;
const AUDIT = 'insert audit';
const MAX_BUDGET_COMMANDS = 1;
const MAX_QUEUE_OPERATIONS = 2;
const BUDGET = 'upstream_budget';

const skip = realBackendsSkip();
if (skip) t.test('store and queue operations per job', { skip }, async () => {});
else {
  t.test(
    "a single-step job costs at most 6 store commands, 1 of them the budget's, and 2 queue operations",
    async (t) => {
      const backends = await countedBackends('roundtrips', { atomicity: 'server' });
      t.teardown(() => backends.close());
      const perJob = await jobRoundTrips(backends, 10);
      t.comment(`per job: ${JSON.stringify(perJob)}`);
      const budget = Object.entries(perJob.commands)
        .filter(([name]) => name.endsWith(` ${BUDGET}`))
        .reduce((sum, [, n]) => sum + n, 0);
      const audit = perJob.commands[AUDIT] ?? 0;
      t.equal(audit, 1, 'one audit record per submission (D32)');
      t.ok(
        perJob.store - audit <= MAX_STORE_COMMANDS,
        `${perJob.store - audit} store commands besides it (at most ${MAX_STORE_COMMANDS}): ${JSON.stringify(perJob.commands)}`,
      );
      t.ok(
        budget <= MAX_BUDGET_COMMANDS,
        `${budget} store commands of the upstream budget (at most ${MAX_BUDGET_COMMANDS})`,
      );
      t.equal(perJob.published, 1, 'one publish per job');
      t.equal(perJob.settled, 1, 'one ack per job');
      t.ok(perJob.queue <= MAX_QUEUE_OPERATIONS);
    },
  );

  t.test('the FerretDB lock workaround, counted', async (t) => {
    const backends = await countedBackends('roundtrips_lock');
    t.teardown(() => backends.close());
    const perJob = await jobRoundTrips(backends, 5);
    t.comment(`per job with the lock workaround: ${JSON.stringify(perJob)}`);
    t.equal(perJob.settled, 1, 'one ack per job');
  });
}
