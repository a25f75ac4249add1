// The attack table of issue 27 (docs/decisions.md P13): how many of a legitimate CFA's reads are
// answered while a stranger sends 20 requests a second with keys it invented, each row against a
// fresh service process (embedded store, no cache, an OPCO limited to 30 calls per 10 s, an
// upstream that accepts only the CFA's key). Not a timing: the figures are answers counted.
//
//   node bench/edge-attacks.mjs [--duration 60] [--only "random keys,behind the hub"]
import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { CFA_KEY, EDGE_RATE_LIMIT, describeOutcome, startEdgeScene, startHubProcess } from '@opco-proxy/e2e';

const { values } = parseArgs({ options: { duration: { type: 'string' }, only: { type: 'string' } } });
const durationS = Number(values.duration ?? (process.env.BENCH_QUICK ? 15 : 60));
const cfaHash = createHash('sha256').update(CFA_KEY).digest('hex');

const ROWS = [
  { name: 'none', attack: 'none' },
  { name: 'a new random key per request', attack: 'random keys' },
  { name: '50 invalid keys reused', attack: '50 invalid keys reused' },
  {
    name: 'random keys, tenantRateLimit at 3/s',
    attack: 'random keys',
    config: { tenantRateLimit: { perSecond: 3, burst: 3 } },
  },
  {
    name: '50 reused keys, tenantRateLimit at 3/s',
    attack: '50 invalid keys reused',
    config: { tenantRateLimit: { perSecond: 3, burst: 3 } },
  },
  { name: 'random keys, behind the hub', attack: 'random keys', hub: true },
  { name: 'random keys, allowedTenants listing the CFA', attack: 'random keys', config: { allowedTenants: [cfaHash] } },
];

const only = values.only?.split(',').map((s) => s.trim());
console.log(
  `edge attacks: ${durationS} s a row; OPCO limit ${EDGE_RATE_LIMIT.limit} per ${EDGE_RATE_LIMIT.windowMs / 1000} s; CFA 2 reads/s; stranger 20 requests/s from 127.0.0.2`,
);
let failed = false;
for (const row of ROWS.filter((r) => !only || only.includes(r.name))) {
  const hub = row.hub ? await startHubProcess({ opcos: { sandbox: EDGE_RATE_LIMIT }, logLevel: 'warn' }) : undefined;
  const scene = await startEdgeScene({ hub, config: row.config });
  try {
    const warm = await scene.warmUp();
    const outcome = await scene.attack(row.attack, durationS * 1000);
    let hubLimit = '';
    if (hub) {
      const limits = await hub.admin('GET', '/admin/limits');
      const budget = limits.body.limits.find((item) => item.opcoId === 'sandbox');
      hubLimit = `; hub effective limit ${budget?.effectiveLimit} of ${budget?.configuredLimit}`;
    }
    console.log(
      `| ${row.name} | ${outcome.cfa.answered}/${outcome.cfa.sent} | ${describeOutcome(outcome)}${hubLimit} (warm-up ${warm})`,
    );
  } catch (err) {
    failed = true;
    console.log(`| ${row.name} | failed: ${err.message}`);
  } finally {
    await scene.close();
    await hub?.stop();
  }
}
process.exit(failed ? 1 : 0);
