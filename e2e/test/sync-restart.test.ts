// D20: a sync survives a restart of its worker and goes on from the last completed batch,
// without fetching completed batches again.
import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { startService, watchSync, realBackends, realBackendsSkip, type ServiceOptions } from '../src/index.js';

async function restartMidSync(t: Test, backends: ServiceOptions['config']) {
  const upstream = await startSandbox({ dossierCount: 400, pageSize: 100 });
  t.teardown(() => upstream.close());
  upstream.faults.add({ route: 'GET /v1/dossiers/liste', latencyMs: 150 });
  const config = { ...backends, sync: { prefetch: 1 } };
  const first = await startService({ upstream, config });
  const accepted = await first.request('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
  t.equal(accepted.status, 202);
  await watchSync(first, accepted.body.syncId, { until: (s) => s.batchesCompleted >= 2 });
  await first.close();
  const listed = () =>
    upstream.received.filter((r) => r.path === '/v1/dossiers/liste').map((r) => r.query.numerosInternes);
  const beforeRestart = listed();
  t.ok(beforeRestart.length >= 2 && beforeRestart.length < 8, `stopped mid-sync after ${beforeRestart.length} batches`);

  const second = await startService({ upstream, config });
  t.teardown(() => second.close());
  const { sync } = await watchSync(second, accepted.body.syncId, { timeoutMs: 40_000 });
  t.equal(sync.status, 'completed', JSON.stringify(sync));
  t.equal(sync.fetched, 400);
  t.equal(sync.batchesCompleted, 8);
  const all = listed();
  t.equal(all.length, 8, 'each of the 8 batches fetched exactly once');
  t.equal(new Set(all).size, 8, 'no batch fetched twice');
  t.ok(all.slice(0, beforeRestart.length).every((numbers, i) => numbers === beforeRestart[i]));
}

t.test('embedded store on disk, embedded queue', async (t) => {
  await restartMidSync(t, { store: { type: 'embedded', path: mkdtempSync(join(tmpdir(), 'opco-sync-')) } });
});

t.test('MongoDB and RabbitMQ', { skip: realBackendsSkip() }, async (t) => {
  await restartMidSync(t, realBackends('syncrestart'));
});
