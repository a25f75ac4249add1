// Issue 11 point 5: attempts are bounded per destination (origin), so a receiver that takes
// seconds to answer, with more deliveries queued for it than the worker's queue slots, holds its
// own lane and not the deliveries to another receiver. No timing is asserted: the fast receiver's
// delivery must arrive while every attempt to the slow one is still waiting for its answer, which
// the slow receiver holds until the test has seen it (and the attempt timeout is far beyond the
// test's own bounds, which only keep a failure from hanging).
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { startService, startReceiver } from '../src/index.js';

const CONCURRENCY = 4;
const service = await startService({ config: { webhooks: { concurrency: CONCURRENCY, timeoutMs: 600_000 } } });
let release!: () => void;
const held = new Promise<void>((resolve) => (release = resolve));
const slow = await startReceiver({ status: 200, until: held });
const fast = await startReceiver();
t.teardown(async () => {
  release();
  await service.close();
  await Promise.all([slow.close(), fast.close()]);
});

t.test('a slow receiver with a backlog does not hold deliveries to another', async (t) => {
  const tenant = 'destinations-tenant-key';
  const hook = async (url: string, events: string[]) => {
    const reply = await service.request('POST', '/webhooks', { key: tenant, body: { callbackUrl: url, events } });
    if (reply.status !== 201) throw new Error(reply.text);
    return reply.body as { id: string };
  };
  const slowHook = await hook(`${slow.url}/slow`, ['sync.batch']);
  await hook(`${fast.url}/fast`, ['sync.completed']);
  // Five times the worker's queue slots, all for the slow receiver, queued before the fast one's.
  const backlog = CONCURRENCY * 5;
  for (let batch = 1; batch <= backlog; batch++) {
    await service.kernel.emit({
      type: 'sync.batch',
      tenant: tenantHash(tenant),
      opcoId: 'sandbox',
      data: { syncId: 's', batch, totalBatches: backlog, dossiers: [] },
    });
  }
  await slow.waitFor(1, 10_000);
  await service.kernel.emit({
    type: 'sync.completed',
    tenant: tenantHash(tenant),
    opcoId: 'sandbox',
    data: { syncId: 's', total: 0, durationMs: 1 },
  });
  const [arrived] = await fast.waitFor(1, 60_000);
  t.equal(arrived.body.event, 'sync.completed');
  const logs = await service.request('GET', `/webhooks/${slowHook.id}/logs`, { key: tenant });
  t.equal(logs.status, 200);
  t.equal(logs.body.length, backlog, 'every slow delivery is recorded');
  t.ok(
    logs.body.every((l: { attempts: number }) => l.attempts === 0),
    'no slow attempt has ended yet: the fast delivery did not wait for one',
  );
  t.ok(
    slow.received.length <= Math.ceil(CONCURRENCY / 2),
    `at most ${Math.ceil(CONCURRENCY / 2)} attempts at once to the slow receiver (saw ${slow.received.length})`,
  );
});
