// Issues 37 and 38: what unproven tenants of one address, and any one tenant, may keep stored.
import t from 'tap';
import { HeldWork, NEAR_RECOUNT_MS, TestClock, type HeldRecords } from '../src/application.js';

interface Row {
  tenant: string;
  heldFrom?: string;
  bytes: number;
  open: boolean;
}

/** A plugin's records as HeldWork sees them, kept in an array. */
function jobsOf(rows: Row[], tenantBound?: HeldRecords['tenantBound']): HeldRecords {
  const from = (address: string) => rows.filter((row) => row.open && row.heldFrom === address);
  const of = (tenant: string) => rows.filter((row) => row.open && row.tenant === tenant);
  return {
    kind: 'jobs',
    tenantBound,
    countFrom: async (address) => from(address).length,
    bytesFrom: async (address) => from(address).reduce((sum, row) => sum + row.bytes, 0),
    tenantsFrom: async (address) => [...new Set(from(address).map((row) => row.tenant))],
    unmark: async (tenant) => rows.filter((row) => row.tenant === tenant).forEach((row) => delete row.heldFrom),
    countOf: async (tenant) => of(tenant).length,
    bytesOf: async (tenant) => of(tenant).reduce((sum, row) => sum + row.bytes, 0),
  };
}

const BOUNDS = { jobs: 3, webhooks: 10, syncs: 10, fileBytes: 1000 };

t.test(
  'unproven tenants of one address: bounded by what they hold; the proven are forgotten; other addresses apart',
  async (t) => {
    const rows: Row[] = [];
    const proven = new Set<string>();
    const held = new HeldWork(new TestClock({ frozen: true }), BOUNDS, async (tenant) => proven.has(tenant));
    held.register(jobsOf(rows));
    const submit = (tenant: string, address: string | undefined, bytes = 0) =>
      held.admit(
        { hash: tenant, apiKey: 'k', unprovenFrom: address },
        'jobs',
        bytes,
        async () => void rows.push({ tenant, heldFrom: address, bytes, open: true }),
      );
    await Promise.all([submit('t1', '10.0.0.1'), submit('t2', '10.0.0.1'), submit('t3', '10.0.0.1')]);
    await t.rejects(
      submit('t4', '10.0.0.1'),
      { code: 'RATE_LIMITED', headers: { 'Retry-After': '30' } },
      'the fourth at once is refused, even sent together',
    );
    t.equal(rows.length, 3, 'and nothing of it stored');
    await submit('t4', '10.0.0.2');
    await submit('t5', undefined);
    t.equal(rows.length, 5, 'another address, and a proven tenant, are not concerned');
    rows[0].open = false;
    await submit('t4', '10.0.0.1');
    t.pass('a job that ended stops counting');
    proven.add('t2');
    await submit('t6', '10.0.0.1');
    t.notOk(rows[1].heldFrom, 'at the bound, the records of a tenant proven since are unmarked');
    await t.rejects(submit('t7', '10.0.0.1', 2000), { code: 'RATE_LIMITED' }, 'files past the bytes bound');
  },
);

t.test('any one tenant: its unfinished jobs and their files are bounded', async (t) => {
  const rows: Row[] = [];
  const clock = new TestClock({ frozen: true });
  const held = new HeldWork(clock, BOUNDS, async () => true);
  held.register(jobsOf(rows, { count: 5, fileBytes: 100 }));
  const submit = (tenant: string, bytes = 0) =>
    held.admit({ hash: tenant, apiKey: 'k' }, 'jobs', bytes, async () => void rows.push({ tenant, bytes, open: true }));
  for (let i = 0; i < 5; i++) await submit('busy');
  await t.rejects(submit('busy'), { code: 'RATE_LIMITED', message: /5 unfinished jobs/ });
  await submit('other');
  rows
    .filter((row) => row.tenant === 'busy')
    .slice(0, 2)
    .forEach((row) => (row.open = false));
  await t.rejects(submit('busy'), { code: 'RATE_LIMITED' }, 'near its bound, the count is trusted for a moment');
  await clock.advance(NEAR_RECOUNT_MS + 1);
  await submit('busy');
  t.equal(
    rows.filter((row) => row.tenant === 'busy' && row.open).length,
    4,
    'room again once jobs ended (counted again near the bound, a moment later)',
  );
  await t.rejects(submit('other', 101), { code: 'RATE_LIMITED', message: /100 bytes/ });
});

t.test(
  "near its bound, a tenant's submissions are counted here between reads of the store, not each by a read",
  async (t) => {
    const rows: Row[] = [];
    const clock = new TestClock({ frozen: true });
    const held = new HeldWork(clock, BOUNDS, async () => true);
    const records = jobsOf(rows, { count: 100 });
    let reads = 0;
    const countOf = (tenant: string) => rows.filter((row) => row.open && row.tenant === tenant).length;
    records.countOf = async (tenant) => (reads++, countOf(tenant));
    held.register(records);
    const submit = () =>
      held.admit(
        { hash: 'bulk', apiKey: 'k' },
        'jobs',
        0,
        async () => void rows.push({ tenant: 'bulk', bytes: 0, open: true }),
      );
    for (let i = 0; i < 90; i++) await submit();
    t.equal(reads, 1, 'far from the bound: one read');
    await clock.advance(NEAR_RECOUNT_MS + 1);
    for (let i = 0; i < 10; i++) await submit();
    t.equal(reads, 2, 'within a fifth of it: one more read, then counted here');
    await t.rejects(submit(), { code: 'RATE_LIMITED' }, 'and the bound holds');
    t.equal(rows.length, 100);
  },
);
