#!/usr/bin/env node
// Bulk sync benchmark (issue: sync and pollers): 10,000 sandbox dossiers under a 60-calls-per-
// window profile limit, the window compressed from a minute (--window-ms, default 2000).
// Prints the wall time as a ratio of the theoretical minimum (calls needed / limit windows),
// the largest number of upstream calls seen in any rolling window, and, as a baseline run in
// the same process, the same sync with no limit at all.
// Run after `npm run build`:  node bench/sync.mjs [--dossiers 10000] [--window-ms 2000]
import { parseArgs } from 'node:util';
import { maxInWindow, startService, watchSync } from '@opco-proxy/e2e';

// BENCH_QUICK=1 (npm run bench -- --quick): 2,000 dossiers instead of 10,000.
const { values } = parseArgs({
  options: {
    dossiers: { type: 'string', default: process.env.BENCH_QUICK === '1' ? '2000' : '10000' },
    'window-ms': { type: 'string', default: '2000' },
    limit: { type: 'string', default: '60' },
  },
});
const dossiers = Number(values.dossiers);
const windowMs = Number(values['window-ms']);
const limit = Number(values.limit);
const pageSize = 100;

async function runSync(rateLimit) {
  const service = await startService({
    sandbox: { dossierCount: dossiers, pageSize },
    opco: { rateLimit },
    config: { jobs: { prefetch: 8 } },
  });
  try {
    service.sandbox.resetStats();
    const started = Date.now();
    const accepted = await service.request('POST', '/sync/dossiers', { body: { opcoId: 'sandbox' } });
    const { sync } = await watchSync(service, accepted.body.syncId, {
      timeoutMs: 30 * 60_000,
      until: (s) => s.status !== 'pending' && s.status !== 'processing',
    });
    const wallMs = Date.now() - started;
    const calls = service.sandbox.received.filter(
      (r) => r.path === '/v2/dossiers/etats' || r.path === '/v1/dossiers/liste',
    );
    return { sync, wallMs, calls: calls.length, arrivals: calls.map((r) => r.at) };
  } finally {
    await service.close();
  }
}

// A limit the 300 calls never reach (the budget keeps one document per allowed call).
const baseline = await runSync({ limit: 1000, windowMs: 1000 });
const limited = await runSync({ limit, windowMs });
if (limited.sync.status !== 'completed' || limited.sync.fetched !== dossiers) {
  console.error('sync did not complete:', limited.sync);
  process.exit(1);
}
const theoreticalMs = (limited.calls / limit) * windowMs;
const worst = maxInWindow(limited.arrivals, windowMs);
console.log(
  `sync of ${dossiers} dossiers, ${limited.calls} upstream calls (${Math.ceil(dossiers / pageSize)} etats pages + ${Math.ceil(dossiers / 50)} liste batches)`,
);
console.log(`limit ${limit} calls per ${windowMs} ms window (a minute compressed ${(60_000 / windowMs).toFixed(0)}x)`);
console.log(`baseline, limit never reached: ${baseline.wallMs} ms`);
console.log(`limited:                ${limited.wallMs} ms`);
console.log(`theoretical minimum:    ${theoreticalMs.toFixed(0)} ms (calls / limit windows)`);
console.log(`ratio to the minimum:   ${(limited.wallMs / theoreticalMs).toFixed(3)}`);
console.log(`max calls in any window: ${worst} (limit ${limit})${worst > limit ? '  <-- OVER THE LIMIT' : ''}`);
process.exit(worst > limit ? 1 : 0);
