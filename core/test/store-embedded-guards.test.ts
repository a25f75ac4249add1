import t from 'tap';
import { createEmbeddedStore } from '../src/store/embedded-store.js';

/** Test documents carry whatever fields a case needs. */
type Row = { _id: string; [field: string]: unknown };

/**
 * The embedded store refuses what the port does not define, so that code written against it
 * does not come to rely on nedb-only behaviour that MongoDB would treat differently.
 */
t.test('filters and updates outside the port are refused', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const c = store.collection<Row>('guards');
  await c.insertOne({ _id: 'a', n: 1 });
  await t.rejects(c.find({ n: { $regex: /1/ } }), /unsupported filter operator \$regex/);
  await t.rejects(c.find({ $nor: [{ n: 1 }] }), /unsupported filter operator \$nor/);
  await t.rejects(c.find({ $where: 'true' }), /unsupported filter operator \$where/);
  await t.rejects(c.find({ n: { $in: 1 } }), /\$in needs an array/);
  await t.rejects(c.find({ $or: [] }), /non-empty array/);
  await t.rejects(c.find({ n: { $gt: 0, x: 1 } }), /cannot mix/);
  await t.rejects(c.updateMany({}, { $rename: { n: 'm' } } as never), /unsupported update operator \$rename/);
  await t.rejects(c.updateMany({}, {}), /at least one operator/);
  await t.rejects(c.insertOne({ n: 1 } as never), /string _id/);
  t.throws(() => store.collection('../escape'), /invalid collection name/);
  t.throws(() => store.collection(''), /invalid collection name/);
  t.strictSame(await c.findOne({ _id: 'a' }), { _id: 'a', n: 1 }, 'nothing changed');
});

t.test('an update with only $setOnInsert does not replace documents', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const c = store.collection<Row>('soi');
  await c.insertOne({ _id: 'a', n: 1 });
  t.equal(await c.updateMany({}, { $setOnInsert: { n: 2 } }), 1);
  t.strictSame(await c.findOne({ _id: 'a' }), { _id: 'a', n: 1 });
});

t.test('writers wait for each other: concurrent $inc through updateMany lose nothing', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const c = store.collection<Row>('inc');
  await c.insertOne({ _id: 'a', n: 0 });
  await Promise.all(Array.from({ length: 100 }, () => c.updateMany({ _id: 'a' }, { $inc: { n: 1 } })));
  t.equal((await c.findOne({ _id: 'a' }))?.n, 100);
});
