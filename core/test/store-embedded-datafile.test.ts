import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DuplicateKeyError } from '../src/ports/store.js';
import { createEmbeddedStore } from '../src/store/embedded-store.js';
import { EmbeddedCollection } from '../src/store/embedded-collection.js';
import { Datafile } from '../src/store/datafile.js';

type Row = { _id: string; [field: string]: unknown };

async function tempDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'opco-datafile-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Lines as nedb 4 wrote them (its journal before any compaction), ending in a line a crash cut short. */
const NEDB_JOURNAL = [
  '{"$$indexCreated":{"fieldName":"key","unique":true}}',
  '{"$$indexCreated":{"fieldName":"a,b","unique":true}}',
  '{"_id":"j1","key":"k1","a":1,"b":1,"at":{"$$date":1000},"list":[1,{"d":{"$$date":2}}]}',
  '{"_id":"j2","key":"k2","a":1,"b":2,"n":1}',
  '{"_id":"j3","key":"k3","a":2,"b":1,"content":{"pages":[{"$$bytes":"aGVsbG8="}]}}',
  '{"_id":"j2","key":"k2","a":1,"b":2,"n":2}',
  '{"$$deleted":true,"_id":"j1"}',
  '{"_id":"j4","key":"k4","a":3,"b":3,"n":',
].join('\n');

t.test('a datafile nedb wrote opens with its documents and indexes; a line cut short is skipped', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'jobs.db'), NEDB_JOURNAL);
  const store = await createEmbeddedStore({ path: dir });
  t.teardown(() => store.close());
  const jobs = store.collection<Row>('jobs');
  t.strictSame(
    (await jobs.find({}, { sort: { _id: 1 } })).map((d) => d._id),
    ['j2', 'j3'],
    'the deletion applied, the cut line skipped',
  );
  t.equal((await jobs.findOne({ _id: 'j2' }))?.n, 2, 'a later line replaces an earlier one');
  const pages = ((await jobs.findOne({ _id: 'j3' }))?.content as { pages: unknown[] }).pages;
  t.ok(Buffer.isBuffer(pages[0]) && pages[0].toString() === 'hello', 'bytes read back as a Buffer');
  await t.rejects(jobs.insertOne({ _id: 'x', key: 'k2' }), DuplicateKeyError, 'the unique index came back');
  await t.rejects(
    jobs.insertOne({ _id: 'y', key: 'new', a: 2, b: 1 }),
    DuplicateKeyError,
    'the compound unique index came back',
  );
  const rewritten = (await readFile(join(dir, 'jobs.db'), 'utf8')).split('\n').filter(Boolean);
  t.equal(rewritten.length, 4, 'opening rewrote the datafile compactly: two indexes, two documents');
});

t.test('a rewrite a crash left before its rename is taken; a mostly unreadable datafile is refused', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'jobs.db~'), '{"_id":"a","n":1}\n');
  await writeFile(join(dir, 'bad.db'), '{"_id":"a"}\nnot json\n{"_id":\n');
  const store = await createEmbeddedStore({ path: dir });
  t.teardown(() => store.close());
  t.strictSame(await store.collection<Row>('jobs').findOne({ _id: 'a' }), { _id: 'a', n: 1 });
  await t.rejects(store.collection<Row>('bad').findOne({}), /unreadable/, 'two lines of three unreadable');
});

/**
 * A process killed with SIGKILL in the middle of its writes: every write acknowledged to it is
 * found by the next process on the directory, whatever was being written when it died.
 */
t.test('every acknowledged write survives a kill -9', async (t) => {
  const dir = await tempDir(t);
  const storeModule = new URL('../src/store/embedded-store.js', import.meta.url).href;
  const writer = `
    const { createEmbeddedStore } = await import(${JSON.stringify(storeModule)});
    const store = await createEmbeddedStore({ path: ${JSON.stringify(dir)} });
    const c = store.collection('log');
    for (let i = 0; ; i++) {
      await c.insertOne({ _id: 'd' + i, n: 0, pad: 'x'.repeat(2000) });
      await c.findOneAndUpdate({ _id: 'd' + i }, { $inc: { n: 1 } });
      if (i % 3 === 0) await c.deleteOne({ _id: 'd' + i });
      process.stdout.write(i + '\\n');
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', writer], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let acknowledged = -1;
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = chunk.toString().split('\n').filter(Boolean);
      acknowledged = Number(lines[lines.length - 1]);
      if (acknowledged >= 300 && !child.killed) child.kill('SIGKILL');
    });
    child.on('exit', () => resolve());
  });
  t.ok(acknowledged >= 300, `the writer acknowledged ${acknowledged + 1} rounds before it was killed`);
  const store = await createEmbeddedStore({ path: dir });
  t.teardown(() => store.close());
  const c = store.collection<Row>('log');
  const lost: number[] = [];
  for (let i = 0; i <= acknowledged; i++) {
    const doc = await c.findOne({ _id: `d${i}` });
    const expected = i % 3 === 0 ? null : 1;
    if ((doc?.n ?? null) !== expected) lost.push(i);
  }
  t.strictSame(lost, [], 'no acknowledged insert, update or deletion is lost');
});

t.test('concurrent writes: each acknowledged once its line is in the file, in the order they were made', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'log.db');
  const log = new EmbeddedCollection<Row>(file, () => undefined);
  t.teardown(() => log.close());
  await log.insertOne({ _id: 'first' });
  const unwritten: string[] = [];
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 200; i++) {
    const id = `d${i}`;
    // Made without waiting: the update is queued behind the insert, the deletion behind both.
    writes.push(log.insertOne({ _id: id, n: 0 }));
    writes.push(
      log.findOneAndUpdate({ _id: id }, { $inc: { n: 1 } }).then(() => {
        if (!readFileSync(file, 'utf8').includes(`{"_id":"${id}","n":1}`)) unwritten.push(id);
      }),
    );
    if (i % 4 === 0) writes.push(log.deleteOne({ _id: id }));
  }
  await Promise.all(writes);
  t.strictSame(unwritten, [], 'no update was acknowledged before its line was written');
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  t.ok(
    lines.indexOf('{"_id":"d7","n":0}') < lines.indexOf('{"_id":"d7","n":1}'),
    "an update's line comes after its insert's",
  );
  const reader = new EmbeddedCollection<Row>(file, () => undefined);
  const kept = await reader.find({}, { sort: { _id: 1 } });
  t.equal(kept.length, 1 + 150, 'read again: every insert but the deleted');
  t.ok(
    kept.every((doc) => doc._id === 'first' || doc.n === 1),
    'each with its update',
  );
});

t.test('a compaction while writes go on loses none of them', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'log.db');
  const log = new EmbeddedCollection<Row>(file, () => undefined);
  t.teardown(() => log.close());
  // About 3 MB: the rewrite writes it in several chunks, and writes come between them.
  await log.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: `d${i}`, n: 0, pad: 'x'.repeat(3000) })));
  let compacting = true;
  const compaction = log.compact().finally(() => (compacting = false));
  const writes: Promise<unknown>[] = [];
  let duringCompaction = 0;
  // A few writes a turn of the event loop, while the rewrite writes its chunks.
  for (let i = 0; i < 1000; i += 2) {
    writes.push(log.updateMany({ _id: `d${i}` }, { $set: { n: 1 } }));
    if (i % 10 === 2) writes.push(log.deleteOne({ _id: `d${i + 1}` }));
    if (compacting) duringCompaction++;
    if (i % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  writes.push(log.insertOne({ _id: 'late', n: 2 }));
  await Promise.all([compaction, ...writes]);
  t.ok(duringCompaction > 50, `${duringCompaction} updates made while the rewrite ran`);
  // A second reader of the file, as the process restarted after a crash would be.
  const reader = new EmbeddedCollection<Row>(file, () => undefined);
  t.equal(await reader.count({}), 1000 - 100 + 1, 'the deletions and the late insert are in the file');
  t.equal(await reader.count({ n: 1 }), 500, 'so is every update');
  t.equal((await reader.findOne({ _id: 'late' }))?.n, 2);
});

t.test('an append made while a rewrite is under way is written to the new file', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'log.db');
  const { datafile } = await Datafile.open(file);
  let during: Promise<void> | undefined;
  function* documents() {
    yield { _id: 'before' };
    // Read as the rewrite goes: a change made now is queued while the rewrite runs.
    during = datafile.append([{ _id: 'during' }]);
    yield { _id: 'after' };
  }
  await datafile.rewrite(documents(), []);
  await during;
  const { docs } = await Datafile.open(file);
  t.strictSame(
    docs.map((doc) => doc._id),
    ['before', 'after', 'during'],
    'the rewrite, then the append made during it',
  );
});
