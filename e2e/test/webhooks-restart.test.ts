// D25: an event written to the outbox survives a restart of the process and is still delivered.
import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { tenantHash } from '@opco-proxy/core';
import {
  startService,
  startReceiver,
  signatureValid,
  realBackends,
  realBackendsSkip,
  KEY_A,
  type ServiceOptions,
} from '../src/index.js';

async function restartBetweenEventAndDelivery(t: Test, backends: Partial<ServiceOptions['config']>) {
  const upstream = await startSandbox();
  const receiver = await startReceiver();
  t.teardown(async () => {
    await receiver.close();
    await upstream.close();
  });
  // The first attempt waits 1.5 s: time enough to stop the process before it is made.
  const config = {
    ...backends,
    webhooks: { retryDelaysMs: [1500, 500, 500, 500] },
  } as unknown as ServiceOptions['config'];
  const first = await startService({ upstream, config });
  const hook = (
    await first.request('POST', '/webhooks', { body: { callbackUrl: `${receiver.url}/r`, events: ['sync.completed'] } })
  ).body;
  await first.kernel.emit({
    type: 'sync.completed',
    tenant: tenantHash(KEY_A),
    opcoId: 'sandbox',
    data: { syncId: 'restart', total: 1, durationMs: 5 },
  });
  t.equal(
    await first.kernel.store.collection('webhook_deliveries').count({ webhookId: hook.id }),
    1,
    'in the outbox before any attempt',
  );
  await first.close();
  t.equal(receiver.received.length, 0, 'nothing delivered before the stop');

  const second = await startService({ upstream, config });
  t.teardown(() => second.close());
  const [request] = await receiver.waitFor(1, 15_000);
  t.equal(request.body.data.syncId, 'restart');
  t.ok(signatureValid(hook.secret, request));
  await new Promise((r) => setTimeout(r, 300));
  t.equal(receiver.received.length, 1, 'delivered once');
}

t.test('embedded store on disk, embedded queue', async (t) => {
  const path = mkdtempSync(join(tmpdir(), 'opco-outbox-'));
  await restartBetweenEventAndDelivery(t, { store: { type: 'embedded', path } });
});

t.test('MongoDB and RabbitMQ', { skip: realBackendsSkip() }, async (t) => {
  await restartBetweenEventAndDelivery(t, realBackends('restart'));
});
