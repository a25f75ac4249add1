import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DuplicateKeyError } from '../src/ports/store.js';
import { createEmbeddedStore } from '../src/store/embedded-store.js';

/** Test documents carry whatever fields a case needs. */
type Row = { _id: string; [field: string]: unknown };

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'opco-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'missing', 'store');
}

t.test('data, Dates and unique indexes survive closing and reopening', async (t) => {
  const path = await tempDir(t);
  const at = new Date('2024-03-04T05:06:07.089Z');
  const first = await createEmbeddedStore({ path });
  const jobs = first.collection<Row>('jobs');
  await jobs.createIndex({ key: 1 }, { unique: true });
  await jobs.insertOne({ _id: 'j1', key: 'k1', at, nested: { when: [at] }, n: 1 });
  await jobs.insertOne({ _id: 'j2', key: 'k2', n: 2 });
  await jobs.insertOne({ _id: 'j3', key: 'k3', n: 3 });
  await jobs.findOneAndUpdate({ _id: 'j1' }, { $inc: { n: 10 } });
  await jobs.deleteOne({ _id: 'j3' });
  await first.collection<Row>('other').insertOne({ _id: 'o1' });
  await first.close();
  t.strictSame((await readdir(path)).sort(), ['jobs.db', 'other.db'], 'one datafile per collection');

  const second = await createEmbeddedStore({ path });
  t.teardown(() => second.close());
  const reopened = second.collection<Row>('jobs');
  const j1 = await reopened.findOne({ _id: 'j1' });
  t.strictSame(j1, { _id: 'j1', key: 'k1', at, nested: { when: [at] }, n: 11 });
  t.ok(j1?.at instanceof Date, 'a Date is read back as a Date');
  t.strictSame(
    (await reopened.find({}, { sort: { _id: 1 } })).map((d) => d._id),
    ['j1', 'j2'],
    'the deletion persisted',
  );
  t.equal(await second.collection<Row>('other').count(), 1);
  await t.rejects(reopened.insertOne({ _id: 'j4', key: 'k2' }), DuplicateKeyError, 'the unique index persisted');
});

t.test('an acknowledged write is on disk before close', async (t) => {
  const path = await tempDir(t);
  const writer = await createEmbeddedStore({ path });
  t.teardown(() => writer.close());
  await writer.collection<Row>('log').insertOne({ _id: 'a', at: new Date(5) });
  await writer.collection<Row>('log').updateMany({ _id: 'a' }, { $set: { done: true } });
  // A second store on the directory stands in for the process restarted after a crash.
  const reader = await createEmbeddedStore({ path });
  t.teardown(() => reader.close());
  t.strictSame(await reader.collection<Row>('log').findOne({ _id: 'a' }), { _id: 'a', at: new Date(5), done: true });
});

t.test('bytes: kept as given, written to the datafile as base64, read back as Buffers, never updated', async (t) => {
  const path = await tempDir(t);
  const pages = [randomBytes(700_000), randomBytes(10)];
  const first = await createEmbeddedStore({ path });
  const files = first.collection<Row>('files');
  await files.insertOne({ _id: 'f', at: new Date(7), content: { pages } });
  await files.insertOne({ _id: 'plain', n: 1 });
  const held = (await files.findOne({ _id: 'f' })) as unknown as { content: { pages: Buffer[] } };
  t.equal(held.content.pages[0], pages[0], 'in memory the store hands out the Buffer it was given, not a copy');
  await t.rejects(
    files.findOneAndUpdate({ _id: 'f' }, { $set: { n: 1 } }),
    TypeError,
    'a document holding bytes is not updated',
  );
  await t.rejects(files.updateMany({}, { $set: { n: 2 } }), TypeError, 'nor through updateMany');
  t.strictSame(await files.findOne({ _id: 'plain' }), { _id: 'plain', n: 1 }, 'a refused updateMany changed nothing');
  await first.close();

  const line = (await readFile(join(path, 'files.db'), 'utf8')).split('\n').find((l) => l.includes('"f"'))!;
  t.ok(line.includes(`{"$$bytes":"${pages[1].toString('base64')}"}`), 'the datafile holds the base64 of the bytes');
  t.notOk(line.includes('"type":"Buffer"'), "not Buffer.toJSON's array of numbers");

  const second = await createEmbeddedStore({ path });
  t.teardown(() => second.close());
  const reopened = second.collection<Row>('files');
  const back = (await reopened.findOne({ _id: 'f' })) as unknown as { at: Date; content: { pages: Buffer[] } };
  t.ok(back.at instanceof Date && back.at.getTime() === 7, 'Dates beside bytes still come back as Dates');
  t.ok(
    back.content.pages.every((page, i) => Buffer.isBuffer(page) && page.equals(pages[i])),
    'bytes come back as the same bytes',
  );
  await t.rejects(
    reopened.findOneAndUpdate({ _id: 'f' }, { $set: { n: 1 } }),
    TypeError,
    'still not updated once read from the datafile',
  );
  t.equal(await reopened.deleteOne({ _id: 'f' }), 1);
  t.equal(await reopened.findOne({ _id: 'f' }), null);
});

t.test('a closed store refuses work', async (t) => {
  const store = await createEmbeddedStore();
  const c = store.collection<Row>('c');
  await c.insertOne({ _id: 'a' });
  await store.close();
  await store.close();
  await t.rejects(store.ping(), /closed/);
  await t.rejects(c.findOne({ _id: 'a' }), /closed/);
  await t.rejects(c.insertOne({ _id: 'b' }), /closed/);
  t.throws(() => store.collection('c'), /closed/);
});
