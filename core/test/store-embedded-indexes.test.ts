import t, { type Test } from 'tap';
import { createEmbeddedStore } from '../src/store/embedded-store.js';
import { DuplicateKeyError } from '../src/ports/store.js';

type Row = { _id: string; key: string; group: string; n: number };

/**
 * The embedded store's indexes serve every lookup by an indexed field (document-table.ts moves an
 * updated document's versions between their keys): after any mix of updates, each lookup by an
 * index must find the current version of exactly the documents a scan finds.
 */
async function consistent(
  t: Test,
  c: ReturnType<Awaited<ReturnType<typeof createEmbeddedStore>>['collection']>,
  count: number,
): Promise<void> {
  const all = (await c.find({}, { sort: { _id: 1 } })) as unknown as Row[];
  t.equal(all.length, count, 'every document is there once');
  for (const row of all) {
    const byId = (await c.findOne({ _id: row._id })) as unknown as Row;
    const byKey = (await c.find({ key: row.key })) as unknown as Row[];
    if (byId?.n !== row.n || byKey.length !== 1 || byKey[0].n !== row.n) {
      t.fail(
        `${row._id}: by _id ${JSON.stringify(byId)}, by key ${JSON.stringify(byKey)}, scanned ${JSON.stringify(row)}`,
      );
      return;
    }
  }
  for (const group of ['g0', 'g1', 'g2', 'moved']) {
    const byGroup = ((await c.find({ group })) as unknown as Row[]).map((r) => r._id).sort();
    t.strictSame(
      byGroup,
      all.filter((r) => r.group === group).map((r) => r._id),
      `group ${group} by its index`,
    );
  }
}

t.test('updates keep every index pointing at the current documents', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const c = store.collection<Row>('indexed');
  await c.createIndex({ key: 1 }, { unique: true });
  await c.createIndex({ group: 1 });
  await c.insertMany(
    Array.from({ length: 60 }, (_, i) => ({
      _id: `d${String(i).padStart(2, '0')}`,
      key: `k${i}`,
      group: `g${i % 3}`,
      n: 0,
    })),
  );

  for (let i = 0; i < 60; i += 2)
    await c.findOneAndUpdate({ _id: `d${String(i).padStart(2, '0')}` }, { $inc: { n: 1 } });
  t.equal(await c.updateMany({ group: 'g1' }, { $inc: { n: 10 } }), 20, 'a multi update of unchanged index keys');
  t.equal(
    await c.updateMany({ group: 'g2', n: 1 }, { $set: { group: 'moved' }, $inc: { n: 100 } }),
    10,
    'a multi update moving some documents to another key',
  );
  await consistent(t, c, 60);

  // Every g0 document gets n changed (swapped in place in the _id and group indexes) and d00's
  // unique key k0: d00 keeps its key (swapped in the key index too), the others move onto k0 and
  // collide. Nothing may change, in any index.
  const before = await c.find({}, { sort: { _id: 1 } });
  await t.rejects(c.updateMany({ group: 'g0' }, { $set: { key: 'k0' }, $inc: { n: 1000 } }), DuplicateKeyError);
  t.strictSame(await c.find({}, { sort: { _id: 1 } }), before, 'the failed update changed no document');
  await consistent(t, c, 60);
  t.equal(await c.count({ key: 'k0' }), 1, 'the key index holds no trace of the failed update');
});
