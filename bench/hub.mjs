#!/usr/bin/env node
// Hub benchmark (issue 10): what a grant from the hub costs next to the store budget's acquire,
// and how much of the budget the hub hands out when demand is three times the limit.
//
// - Grant latency (p50, p99: one ask at a time, limit never reached) and grants per second
//   (32 asks in flight, limit never reached), for one instance and for three, each as a ratio
//   against the store budget (core's default admission provider, embedded store) measured in the
//   same round; rounds interleave the providers, and min / median / max of each ratio are printed.
// - Utilisation: 3 instances, 3x the limit of demand as background work, each call 20 ms long:
//   calls made / calls allowed over whole windows, and the windows over the limit (must be 0).
// The hub is a real process (`opco-proxy hub --config FILE`) on this machine; instances are
// HubAdmission objects in this process, as each kernel has one.
// Run after `npm run build`:  node bench/hub.mjs [--rounds 5] [--limit 20] [--window-ms 1000] [--windows 10]
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createEmbeddedStore, createLogger, systemClock } from '@opco-proxy/core';
import { StoreBudgetAdmission, UpstreamBudget } from '@opco-proxy/core/limits';
import { createHubAdmission } from '@opco-proxy/plugin-hub';
import { startHubProcess } from '@opco-proxy/e2e';

// BENCH_QUICK=1 (npm run bench -- --quick): fewer rounds and windows.
const quick = process.env.BENCH_QUICK === '1';
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: quick ? '2' : '5' },
    limit: { type: 'string', default: '20' },
    'window-ms': { type: 'string', default: '1000' },
    windows: { type: 'string', default: quick ? '4' : '10' },
  },
});
const rounds = Number(values.rounds);
const utilisation = { limit: Number(values.limit), windowMs: Number(values['window-ms']) };
const windows = Number(values.windows);
/** A budget the latency and throughput runs never reach, on both providers. */
const OPEN = { limit: 2000, windowMs: 100 };
const LATENCY_ASKS = 400;
const THROUGHPUT_MS = 1000;
const IN_FLIGHT = 32;
const CALL_MS = 20;

const silent = createLogger({ level: 'silent' });
const ask = (opcoId, rateLimit, i) => ({
  opcoId,
  rateLimit,
  route: 'GET /dossiers/etats',
  method: 'GET',
  priority: 5,
  tenant: `cfa-${i % 4}`,
  synchronous: false,
});

const hub = await startHubProcess({ opcos: { open: OPEN, tight: utilisation }, logLevel: 'warn' });
const store = await createEmbeddedStore();
const stopping = [];
async function hubInstances(count, fleetId) {
  const admissions = [];
  for (let i = 0; i < count; i++) {
    const { key } = await hub.key(fleetId, `bench-${i + 1}`);
    const admission = createHubAdmission({
      hub: { url: hub.url.replace(/^http/, 'ws'), apiKeyEnv: 'BENCH_HUB_KEY', expectedInstances: count },
      env: { BENCH_HUB_KEY: key },
      log: silent,
    });
    stopping.push(() => admission.close());
    admissions.push(admission);
  }
  while (!admissions.every((a) => a.state === 'connected')) await sleep(10);
  return admissions;
}
// The store budget as instances sharing one store use it: one provider each, one slot collection.
const storeInstances = (count) =>
  Array.from({ length: count }, () => new StoreBudgetAdmission(new UpstreamBudget(store, systemClock)));

const providers = {
  'store x1': storeInstances(1),
  'store x3': storeInstances(3),
  'hub x1': await hubInstances(1, 'bench-one'),
  'hub x3': await hubInstances(3, 'bench-three'),
};

async function latency(admissions) {
  const samples = [];
  for (let i = 0; i < LATENCY_ASKS; i++) {
    const started = performance.now();
    const lease = await admissions[i % admissions.length].admit(ask('open', OPEN, i));
    samples.push(performance.now() - started);
    await lease.release({ status: 200, latencyMs: 0 });
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length * 0.5)], p99: samples[Math.floor(samples.length * 0.99)] };
}

async function throughput(admissions) {
  const until = performance.now() + THROUGHPUT_MS;
  let grants = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async (_, i) => {
      while (performance.now() < until) {
        const lease = await admissions[i % admissions.length].admit(ask('open', OPEN, i));
        grants += 1;
        await lease.release({ status: 200, latencyMs: 0 });
      }
    }),
  );
  return grants / (THROUGHPUT_MS / 1000);
}

/** 3x the limit in flight over three instances; each call lasts CALL_MS. */
async function utilise(admissions, opcoId) {
  const starts = [];
  const until = performance.now() + (windows + 1) * utilisation.windowMs;
  await Promise.all(
    Array.from({ length: 3 * utilisation.limit }, async (_, i) => {
      while (performance.now() < until) {
        const lease = await admissions[i % admissions.length].admit(ask(opcoId, utilisation, i));
        starts.push(performance.now());
        await sleep(CALL_MS);
        await lease.release({ status: 200, latencyMs: CALL_MS });
      }
    }),
  );
  starts.sort((a, b) => a - b);
  const measured = starts.filter((s) => s < starts[0] + windows * utilisation.windowMs).length;
  let over = 0;
  for (let j = 0, i = 0; j < starts.length; j++) {
    while (starts[j] - starts[i] >= utilisation.windowMs) i++;
    if (j - i + 1 > utilisation.limit) over += 1;
  }
  return { made: measured, allowed: windows * utilisation.limit, over };
}

const ratios = { 'p50 x1': [], 'p99 x1': [], 'grants/s x1': [], 'p50 x3': [], 'p99 x3': [], 'grants/s x3': [] };
const absolute = [];
for (let round = 0; round < rounds; round++) {
  // Interleaved, and the order flips every round, so drift on a shared machine hits both sides.
  const order = round % 2 === 0 ? ['store', 'hub'] : ['hub', 'store'];
  const seen = {};
  for (const n of ['x1', 'x3']) {
    for (const side of order) {
      const admissions = providers[`${side} ${n}`];
      seen[`${side} ${n}`] = { ...(await latency(admissions)), rate: await throughput(admissions) };
    }
    ratios[`p50 ${n}`].push(seen[`hub ${n}`].p50 / seen[`store ${n}`].p50);
    ratios[`p99 ${n}`].push(seen[`hub ${n}`].p99 / seen[`store ${n}`].p99);
    ratios[`grants/s ${n}`].push(seen[`hub ${n}`].rate / seen[`store ${n}`].rate);
  }
  absolute.push(seen);
}
const hubUse = await utilise(await hubInstances(3, 'bench-utilisation'), 'tight');
const storeUse = await utilise(storeInstances(3), 'tight');

const stats = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return `min ${sorted[0].toFixed(2)}  median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)}  max ${sorted[sorted.length - 1].toFixed(2)}`;
};
const ms = (x) => `${x.toFixed(3)} ms`;
console.log(
  `hub vs store budget (embedded store), ${rounds} interleaved rounds; ratio = hub / store (latency: lower is better; grants/s: higher is better)`,
);
for (const [name, xs] of Object.entries(ratios)) console.log(`  ${name.padEnd(12)} ${stats(xs)}`);
const last = absolute[absolute.length - 1];
console.log('last round, absolute:');
for (const [name, m] of Object.entries(last))
  console.log(`  ${name.padEnd(9)} p50 ${ms(m.p50)}  p99 ${ms(m.p99)}  ${m.rate.toFixed(0)} grants/s`);
console.log(
  `utilisation, 3 instances, demand 3x the limit (${utilisation.limit} per ${utilisation.windowMs} ms, ${windows} windows, calls of ${CALL_MS} ms, priority 5):`,
);
console.log(
  `  hub:          ${hubUse.made} / ${hubUse.allowed} = ${(hubUse.made / hubUse.allowed).toFixed(3)} (goal >= 0.98), windows over the limit: ${hubUse.over}`,
);
console.log(
  `  store budget: ${storeUse.made} / ${storeUse.allowed} = ${(storeUse.made / storeUse.allowed).toFixed(3)} (keeps 10% for client requests, D11), windows over the limit: ${storeUse.over}`,
);

for (const stop of stopping) await stop();
await store.close();
await hub.stop();
process.exit(hubUse.over > 0 || storeUse.over > 0 ? 1 : 0);
