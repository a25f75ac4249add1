/**
 * The one contract every Store implementation passes (DESIGN "Ports"). A backend's test file
 * calls `storeContract(t, makeStore)`; each subtest opens its own store, works in collections
 * with a random suffix (parallel runs share a server) and empties them before closing.
 *
 * Shipped in src, not test, so that backend packages can import it
 * (`@opco-proxy/core/store-contract`); `tap` is only a type import here.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import {
  DuplicateKeyError,
  MAX_DOCUMENT_DEPTH,
  type Collection,
  type Doc,
  type Filter,
  type Store,
} from '../ports/store.js';

/** Test documents carry whatever fields a case needs. */
type Loose = Doc & Record<string, unknown>;

type Body = (
  t: Test,
  store: Store,
  collection: <T extends Doc = Loose>(label: string) => Collection<T>,
) => Promise<void>;

export function storeContract(t: Test, makeStore: () => Promise<Store>): void {
  const run = (name: string, body: Body): void => {
    void t.test(name, async (t) => {
      const store = await makeStore();
      const made: Collection<Doc>[] = [];
      t.teardown(async () => {
        for (const c of made) await c.deleteMany({});
        await store.close();
      });
      const collection = <T extends Doc = Loose>(label: string): Collection<T> => {
        const c = store.collection<T>(`contract_${label}_${randomBytes(5).toString('hex')}`);
        made.push(c);
        return c;
      };
      await body(t, store, collection);
    });
  };

  run(
    'documents and updates nested deeper than MAX_DOCUMENT_DEPTH are refused at once, whatever their shape',
    async (t, _store, collection) => {
      const c = collection('depth');
      const nested = (depth: number, leaf: unknown = 1): unknown => {
        let value: unknown = leaf;
        for (let i = 1; i < depth; i++) value = i % 2 ? [value, value] : { a: value };
        return depth > 0 ? [value] : leaf;
      };
      // A walk that recursed over these values would not end (nedb's is exponential in nested arrays).
      await t.rejects(c.insertOne({ _id: 'deep', v: nested(MAX_DOCUMENT_DEPTH + 40) }), TypeError, 'a deep document');
      // Objects only: arrays directly inside arrays are not portable (FerretDB v1 refuses them).
      let shallow: unknown = 1;
      for (let i = 0; i < MAX_DOCUMENT_DEPTH - 2; i++) shallow = { a: shallow, list: [1] };
      await c.insertOne({ _id: 'ok', v: shallow });
      await t.rejects(
        c.findOneAndUpdate({ _id: 'ok' }, { $set: { v: nested(MAX_DOCUMENT_DEPTH + 40) } }),
        TypeError,
        'a deep update',
      );
      await t.rejects(c.updateMany({}, { $set: { w: nested(5000) } }), TypeError, 'a very deep update');
      t.equal((await c.findOne({ _id: 'ok' }))!._id, 'ok');
    },
  );

  run('ping resolves and kind names the backend', async (t, store) => {
    await store.ping();
    t.type(store.kind, 'string');
    t.ok(store.kind.length > 0);
  });

  run('insertOne and findOne round-trip documents, Dates as Dates', async (t, _store, collection) => {
    const c = collection('roundtrip');
    const at = new Date('2024-05-06T07:08:09.123Z');
    const doc = {
      _id: 'a',
      s: 'x',
      n: 1.5,
      b: true,
      nil: null,
      at,
      nested: { deep: { v: 1 }, list: [1, 'two', { three: 3 }] },
      dates: [at],
    };
    await c.insertOne(structuredClone(doc));
    const got = (await c.findOne({ _id: 'a' })) as unknown as typeof doc;
    t.strictSame(got, doc);
    t.ok(got.at instanceof Date, 'a Date field comes back as a Date');
    t.ok(got.dates[0] instanceof Date, 'a Date in an array comes back as a Date');
    t.equal(await c.findOne({ _id: 'missing' }), null);
    got.nested.deep.v = 2;
    got.at.setTime(0);
    t.strictSame(await c.findOne({ _id: 'a' }), doc, 'a returned document is a copy');
  });

  run(
    'bytes are stored as inserted and read back as Buffers; no update carries them',
    async (t, _store, collection) => {
      const c = collection('bytes');
      const big = randomBytes(3 * 1024 * 1024 + 5);
      const small = randomBytes(48);
      const doc = {
        _id: 'f',
        role: 'cerfa',
        content: { iv: 'aXY=', pages: [big, small, Buffer.alloc(0)] },
        raw: new Uint8Array([1, 2, 250]),
      };
      await c.insertOne(doc);
      const got = (await c.findOne({ _id: 'f' })) as unknown as {
        content: { iv: string; pages: unknown[] };
        raw: unknown;
        role: string;
      };
      t.equal(got.role, 'cerfa');
      t.equal(got.content.iv, 'aXY=');
      t.ok(
        got.content.pages.every((page) => Buffer.isBuffer(page)),
        'each page comes back as a Buffer',
      );
      t.ok(big.equals(got.content.pages[0] as Buffer), 'megabytes, byte for byte');
      t.ok(small.equals(got.content.pages[1] as Buffer));
      t.equal((got.content.pages[2] as Buffer).length, 0, 'empty bytes stay bytes');
      t.ok(Buffer.isBuffer(got.raw) && Buffer.from([1, 2, 250]).equals(got.raw), 'a Uint8Array comes back as a Buffer');
      t.strictSame(
        await c.insertMany([
          { _id: 'g', data: small },
          { _id: 'h', n: 1 },
        ]),
        { duplicates: [] },
        'insertMany takes bytes too',
      );
      t.ok(small.equals((await c.findOne({ _id: 'g' }))!.data as Buffer));
      await c.insertOne({ _id: 'plain', n: 1 });
      await t.rejects(c.findOneAndUpdate({ _id: 'plain' }, { $set: { data: small } }), TypeError, '$set of bytes');
      await t.rejects(
        c.findOneAndUpdate({ _id: 'plain' }, { $push: { list: { data: small } } }),
        TypeError,
        '$push of bytes, nested',
      );
      await t.rejects(c.updateMany({}, { $set: { data: small } }), TypeError, 'updateMany');
      await t.rejects(
        c.findOneAndUpdate({ _id: 'new' }, { $setOnInsert: { data: small } }, { upsert: true }),
        TypeError,
        'an upsert',
      );
      t.strictSame(await c.findOne({ _id: 'plain' }), { _id: 'plain', n: 1 }, 'nothing refused was written');
      t.equal(await c.findOne({ _id: 'new' }), null);
      t.equal(await c.deleteMany({ role: 'cerfa' }), 1, 'a document holding bytes is deleted as any other');
      t.equal(await c.count(), 3);
    },
  );

  run('insertOne rejects a duplicate _id with DuplicateKeyError', async (t, _store, collection) => {
    const c = collection('dupid');
    await c.insertOne({ _id: 'a' });
    await expectDuplicate(t, c.insertOne({ _id: 'a' }));
    t.equal(await c.count(), 1);
  });

  run('insertMany inserts a batch as insertOne would, copies and Dates included', async (t, _store, collection) => {
    const c = collection('many');
    const at = new Date('2024-05-06T07:08:09.123Z');
    const docs = Array.from({ length: 30 }, (_, i) => ({
      _id: `m${String(i).padStart(2, '0')}`,
      i,
      at,
      nested: { list: [i, 'x'] },
    }));
    t.strictSame(await c.insertMany(docs), { duplicates: [] });
    docs[0].nested.list.push('changed after');
    t.equal(await c.count(), 30);
    const stored = (await c.find({}, { sort: { _id: 1 } })) as unknown as typeof docs;
    t.strictSame(stored[0], { _id: 'm00', i: 0, at, nested: { list: [0, 'x'] } }, 'what was given, not what it became');
    t.ok(stored[29].at instanceof Date, 'a Date comes back as a Date');
    t.strictSame(await c.insertMany([]), { duplicates: [] }, 'an empty batch is no error');
    t.equal(await c.count(), 30);
  });

  run('insertMany skips the documents whose key is held and inserts the others', async (t, _store, collection) => {
    const c = collection('manydup');
    await c.createIndex({ key: 1 }, { unique: true });
    await c.insertOne({ _id: 'held', key: 'k-held' });
    const result = await c.insertMany([
      { _id: 'a', key: 'k-a' },
      { _id: 'held', key: 'k-other' },
      { _id: 'b', key: 'k-held' },
      { _id: 'a', key: 'k-a2' },
      { _id: 'c', key: 'k-c' },
    ]);
    t.strictSame(
      result,
      { duplicates: ['held', 'b', 'a'] },
      'a held _id, a held unique key, an _id earlier in the batch',
    );
    t.strictSame(
      (await c.find({}, { sort: { _id: 1 } })).map((d) => [d._id, d.key]),
      [
        ['a', 'k-a'],
        ['c', 'k-c'],
        ['held', 'k-held'],
      ],
    );
    t.strictSame(await c.insertMany([{ _id: 'a' }, { _id: 'c' }]), { duplicates: ['a', 'c'] }, 'a batch held whole');
  });

  run(
    'concurrent insertMany of overlapping batches insert each document once, for one caller',
    async (t, _store, collection) => {
      const c = collection<{ _id: string; by: number }>('manyrace');
      const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
      const batches = Array.from({ length: 8 }, (_, b) =>
        ids.filter((_, i) => (i + b) % 3 !== 0).map((_id) => ({ _id, by: b })),
      );
      const results = await Promise.all(batches.map((batch) => c.insertMany(batch)));
      const insertedBy = new Map<string, number>();
      results.forEach((result, b) => {
        for (const { _id } of batches[b])
          if (!result.duplicates.includes(_id)) insertedBy.set(_id, (insertedBy.get(_id) ?? 0) + 1);
      });
      t.ok(
        [...insertedBy.values()].every((n) => n === 1),
        'no document inserted by two callers',
      );
      t.equal(insertedBy.size, 20, 'every document inserted by one');
      t.equal(await c.count(), 20);
      for (const doc of await c.find({}))
        t.ok(
          batches[doc.by].some((d) => d._id === doc._id) && !results[doc.by].duplicates.includes(doc._id),
          `${doc._id} is its inserter's`,
        );
    },
  );

  run('insertMany checks every document before writing any', async (t, _store, collection) => {
    const c = collection('manycheck');
    let deep: unknown = 1;
    for (let i = 0; i < MAX_DOCUMENT_DEPTH + 5; i++) deep = { a: deep };
    await t.rejects(c.insertMany([{ _id: 'ok' }, { _id: 'deep', v: deep }]), TypeError, 'a deep document');
    await t.rejects(c.insertMany([{ _id: 'ok' }, { _id: '' }]), TypeError, 'an empty _id');
    await t.rejects(c.insertMany([{ _id: 'ok' }, { v: 1 } as unknown as Loose]), TypeError, 'no _id');
    t.equal(await c.count(), 0, 'nothing written');
  });

  run('find applies every filter operator of the port', async (t, _store, collection) => {
    const c = collection('filters');
    const day = (n: number): Date => new Date(Date.UTC(2024, 0, 1 + n));
    await c.insertOne({
      _id: 'd1',
      n: 1,
      s: 'apple',
      at: day(1),
      tags: ['red', 'fruit'],
      sub: { k: 'x', n: 10 },
      opt: 'set',
    });
    await c.insertOne({
      _id: 'd2',
      n: 2,
      s: 'banana',
      at: day(2),
      tags: ['yellow', 'fruit'],
      sub: { k: 'y', n: 20 },
      opt: null,
    });
    await c.insertOne({ _id: 'd3', n: 3, s: 'cherry', at: day(3), tags: ['red'], sub: { k: 'x', n: 30 } });
    await c.insertOne({
      _id: 'd4',
      n: 4,
      s: 'date',
      at: day(4),
      tags: [],
      sub: { k: 'z', n: 40 },
      items: [
        { sku: 'a', q: 1 },
        { sku: 'b', q: 5 },
      ],
    });
    const cases: [string, Filter, string[]][] = [
      ['empty filter', {}, ['d1', 'd2', 'd3', 'd4']],
      ['equality', { s: 'banana' }, ['d2']],
      ['dotted equality', { 'sub.k': 'x' }, ['d1', 'd3']],
      ['dotted range', { 'sub.n': { $gte: 20, $lt: 40 } }, ['d2', 'd3']],
      ['$gt $lte', { n: { $gt: 1, $lte: 3 } }, ['d2', 'd3']],
      ['$eq', { n: { $eq: 4 } }, ['d4']],
      ['$ne', { n: { $ne: 1 } }, ['d2', 'd3', 'd4']],
      ['$in', { n: { $in: [1, 3, 99] } }, ['d1', 'd3']],
      ['$nin', { n: { $nin: [1, 3] } }, ['d2', 'd4']],
      ['$in on _id', { _id: { $in: ['d1', 'd4', 'zz'] } }, ['d1', 'd4']],
      ['string range', { s: { $gt: 'b', $lt: 'd' } }, ['d2', 'd3']],
      ['array holds the value', { tags: 'red' }, ['d1', 'd3']],
      ['$in on an array', { tags: { $in: ['yellow', 'none'] } }, ['d2']],
      ['$ne on an array: no element equals', { tags: { $ne: 'red' } }, ['d2', 'd4']],
      ['dotted path through an array', { 'items.sku': 'b' }, ['d4']],
      ['range through an array', { 'items.q': { $gt: 3 } }, ['d4']],
      ['$exists true (null exists)', { opt: { $exists: true } }, ['d1', 'd2']],
      ['$exists false', { opt: { $exists: false } }, ['d3', 'd4']],
      ['null matches null and missing', { opt: null }, ['d2', 'd3', 'd4']],
      ['$ne null', { opt: { $ne: null } }, ['d1']],
      ['Date equality', { at: day(2) }, ['d2']],
      ['Date range', { at: { $gt: day(1), $lte: day(3) } }, ['d2', 'd3']],
      ['Date $lt', { at: { $lt: day(2) } }, ['d1']],
      ['Date $in', { at: { $in: [day(1), day(4)] } }, ['d1', 'd4']],
      ['whole sub-document', { sub: { k: 'x', n: 10 } }, ['d1']],
      ['$or', { $or: [{ n: 1 }, { 'sub.k': 'z' }] }, ['d1', 'd4']],
      ['$and', { $and: [{ n: { $gte: 2 } }, { n: { $lte: 3 } }] }, ['d2', 'd3']],
      ['nested $or / $and', { $or: [{ s: 'apple' }, { $and: [{ tags: 'fruit' }, { n: { $gt: 1 } }] }] }, ['d1', 'd2']],
      ['field and $or together', { tags: 'red', $or: [{ n: 3 }, { n: 4 }] }, ['d3']],
      ['no match', { s: 'kiwi' }, []],
    ];
    for (const [label, filter, expected] of cases) {
      const found = (await c.find(filter)).map((d) => d._id).sort();
      t.strictSame(found, expected, label);
      t.equal(await c.count(filter), expected.length, `count: ${label}`);
    }
    t.equal(await c.findOne({ s: 'kiwi' }), null, 'findOne without a match');
    t.equal((await c.findOne({ 'sub.n': 30 }))?._id, 'd3', 'findOne with a dotted path');
  });

  run('find sorts, skips and limits', async (t, _store, collection) => {
    const c = collection('sorting');
    const rows = [
      { _id: 'a', n: 1, k: 'x', at: new Date(4000) },
      { _id: 'b', n: 2, k: 'y', at: new Date(3000) },
      { _id: 'c', n: 3, k: 'x', at: new Date(2000) },
      { _id: 'd', n: 4, k: 'z', at: new Date(1000) },
    ];
    for (const row of rows) await c.insertOne({ ...row, sub: { n: -row.n } });
    const ids = async (...args: Parameters<typeof c.find>) => (await c.find(...args)).map((d) => d._id);
    t.strictSame(await ids({}, { sort: { n: -1 } }), ['d', 'c', 'b', 'a'], 'descending');
    t.strictSame(await ids({}, { sort: { k: 1, n: -1 } }), ['c', 'a', 'b', 'd'], 'two keys');
    t.strictSame(await ids({}, { sort: { 'sub.n': 1 } }), ['d', 'c', 'b', 'a'], 'dotted key');
    t.strictSame(await ids({}, { sort: { at: 1 }, skip: 1, limit: 2 }), ['c', 'b'], 'Date key, skip and limit');
    t.strictSame(await ids({ k: 'x' }, { sort: { n: -1 }, limit: 1 }), ['c'], 'filter, sort and limit');
    t.strictSame(await ids({}, { sort: { n: 1 }, skip: 3 }), ['d'], 'skip alone');
    t.strictSame(await ids({}, { sort: { n: 1 }, skip: 10 }), [], 'skip past the end');
  });

  run(
    'a top-level $in and an $and read like any filter: sorted, skipped, limited, each match once',
    async (t, _store, collection) => {
      // The shapes a backend may serve its own way (FerretDB: a search per value, clauses lifted).
      const c = collection('in_and');
      await c.insertMany([
        { _id: 'a', s: 'p', n: 5, at: new Date(5000) },
        { _id: 'b', s: 'q', n: 4, at: new Date(1000) },
        { _id: 'c', s: 'r', n: 3, at: new Date(3000) },
        { _id: 'd', s: 'p', n: 2, at: new Date(2000) },
        { _id: 'e', s: ['p', 'q'], n: 1, at: new Date(4000) },
      ]);
      const ids = async (...args: Parameters<typeof c.find>) => (await c.find(...args)).map((d) => d._id);
      const pq = { s: { $in: ['p', 'q'] } };
      t.strictSame(
        await ids(pq, { sort: { at: 1 } }),
        ['b', 'd', 'e', 'a'],
        'every value, in order, an array matching two values once',
      );
      t.strictSame(
        await ids(pq, { sort: { at: 1 }, skip: 1, limit: 2 }),
        ['d', 'e'],
        'skip and limit over the whole list',
      );
      t.strictSame(
        await ids({ ...pq, n: { $gte: 2 } }, { sort: { n: -1 }, limit: 2 }),
        ['a', 'b'],
        'beside other conditions',
      );
      t.strictSame((await ids(pq)).sort(), ['a', 'b', 'd', 'e'], 'unsorted');
      t.strictSame(await ids({ s: { $in: ['p', 'p'] } }, { sort: { n: 1 } }), ['e', 'd', 'a'], 'a value named twice');
      t.strictSame(
        await ids(
          {
            $and: [pq, { n: { $lt: 5 } }, { $or: [{ at: { $lt: new Date(1500) } }, { at: { $gt: new Date(3500) } }] }],
          },
          { sort: { n: 1 } },
        ),
        ['e', 'b'],
        'an $and of distinct fields',
      );
      t.strictSame(
        await ids({ $and: [{ n: { $gt: 1 } }, { n: { $lt: 4 } }] }, { sort: { n: 1 } }),
        ['d', 'c'],
        'an $and naming one field twice',
      );
      t.equal(await c.count(pq), 4, 'count');
      t.equal(
        (await c.findOneAndUpdate({ $and: [pq, { n: 4 }] }, { $set: { seen: true } }))?._id,
        'b',
        'findOneAndUpdate',
      );
    },
  );

  run('shared says whether another store opened the same way sees the writes', async (t, store) => {
    t.type(store.shared, 'boolean');
    const name = `contract_shared_${randomBytes(5).toString('hex')}`;
    // One step after the other: two embedded stores on one directory must not load a file at once.
    const other = await makeStore();
    const seen = other.collection(name);
    t.equal(await seen.findOne({ _id: 'w' }), null, 'opened before the write');
    const c = store.collection(name);
    try {
      await c.insertOne({ _id: 'w' });
      t.equal((await seen.findOne({ _id: 'w' })) !== null, store.shared);
    } finally {
      await c.deleteMany({});
      await other.close();
    }
  });

  run('findOneAndUpdate returns the document after by default, before on request', async (t, _store, collection) => {
    const c = collection('fau');
    await c.insertOne({ _id: 'f1', n: 1 });
    t.strictSame(await c.findOneAndUpdate({ _id: 'f1' }, { $inc: { n: 1 } }), { _id: 'f1', n: 2 }, 'after');
    t.strictSame(
      await c.findOneAndUpdate({ _id: 'f1' }, { $set: { s: 'x' } }, { returnDocument: 'before' }),
      { _id: 'f1', n: 2 },
      'before',
    );
    t.strictSame(await c.findOneAndUpdate({ _id: 'f1' }, { $set: { s: 'y' } }, { returnDocument: 'after' }), {
      _id: 'f1',
      n: 2,
      s: 'y',
    });
    t.equal(await c.findOneAndUpdate({ _id: 'nope' }, { $set: { s: 'x' } }), null, 'no match and no upsert: null');
    t.equal(await c.findOneAndUpdate({ n: { $gt: 5 } }, { $set: { s: 'x' } }, { returnDocument: 'before' }), null);
    t.equal(await c.count(), 1, 'nothing inserted');
    t.strictSame(
      await c.findOneAndUpdate({ _id: 'f1' }, { $setOnInsert: { s: 'z' } }),
      { _id: 'f1', n: 2, s: 'y' },
      '$setOnInsert alone leaves a match untouched',
    );
  });

  run('findOneAndUpdate with sort changes the first document in that order', async (t, _store, collection) => {
    const c = collection('fausort');
    const prios = [5, 1, 3, 1, 2];
    for (const [i, prio] of prios.entries()) await c.insertOne({ _id: `q${i}`, prio, seq: i, state: 'ready' });
    const take = async (sort: Record<string, 1 | -1>) =>
      (await c.findOneAndUpdate({ state: 'ready' }, { $set: { state: 'taken' } }, { sort }))?._id;
    t.equal(await take({ prio: 1, seq: 1 }), 'q1');
    t.equal(await take({ prio: 1, seq: 1 }), 'q3');
    t.equal(await take({ prio: -1 }), 'q0');
    t.equal(await take({ prio: 1, seq: -1 }), 'q4');
    t.equal(await take({ prio: 1 }), 'q2');
    t.equal(await take({ prio: 1 }), undefined, 'none left');
  });

  run(
    'findOneAndUpdate upserts {equality fields, $setOnInsert, $set} and other operators',
    async (t, _store, collection) => {
      const c = collection('upsert');
      const created = new Date('2024-02-03T04:05:06.007Z');
      const first = await c.findOneAndUpdate(
        { _id: 'u1', tenant: 't1', 'meta.kind': 'k', status: { $eq: 'new' }, size: { $gte: 0 } },
        { $setOnInsert: { createdAt: created }, $set: { name: 'first' }, $inc: { hits: 1 }, $push: { log: 'a' } },
        { upsert: true },
      );
      const inserted = {
        _id: 'u1',
        tenant: 't1',
        meta: { kind: 'k' },
        status: 'new',
        createdAt: created,
        name: 'first',
        hits: 1,
        log: ['a'],
      };
      t.strictSame(first, inserted, 'returns the inserted document');
      t.strictSame(await c.findOne({ _id: 'u1' }), inserted, 'stores it');
      const second = await c.findOneAndUpdate(
        { _id: 'u1', tenant: 't1' },
        { $setOnInsert: { createdAt: new Date() }, $set: { name: 'second' }, $inc: { hits: 1 }, $push: { log: 'b' } },
        { upsert: true },
      );
      t.strictSame(second, { ...inserted, name: 'second', hits: 2, log: ['a', 'b'] }, 'a match ignores $setOnInsert');
      t.ok(second && (second as { createdAt?: unknown }).createdAt instanceof Date);

      t.equal(
        await c.findOneAndUpdate({ _id: 'u2' }, { $set: { v: 1 } }, { upsert: true, returnDocument: 'before' }),
        null,
        "upsert with 'before' returns null",
      );
      t.strictSame(await c.findOne({ _id: 'u2' }), { _id: 'u2', v: 1 });

      const generated = await c.findOneAndUpdate({ key: 'g' }, { $set: { v: 1 } }, { upsert: true });
      t.type(generated?._id, 'string', 'an upsert without _id gets a string _id');
      t.equal((await c.findOne({ key: 'g' }))?._id, generated?._id);
      t.equal(await c.count(), 3);
    },
  );

  run('concurrent upserts of one _id land on one document', async (t, _store, collection) => {
    const c = collection('counter');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        c.findOneAndUpdate(
          { _id: 'counter' },
          { $inc: { n: 1 }, $setOnInsert: { since: new Date() } },
          { upsert: true },
        ),
      ),
    );
    t.equal(results.length, 20, 'every upsert resolved');
    t.strictSame(
      results.map((r) => (r as { n?: number } | null)?.n).sort((a, b) => (a ?? 0) - (b ?? 0)),
      Array.from({ length: 20 }, (_, i) => i + 1),
      'each saw its own increment',
    );
    t.equal(await c.count(), 1);
    t.equal(((await c.findOne({ _id: 'counter' })) as { n?: number } | null)?.n, 20);
  });

  run('findOneAndUpdate is atomic: 50 concurrent claims of 10 slots make 10 winners', async (t, _store, collection) => {
    const c = collection<{ _id: string; usedAt: Date; holder?: string }>('slots');
    for (let i = 0; i < 10; i++) await c.insertOne({ _id: `slot${i}`, usedAt: new Date(0) });
    for (const sort of [undefined, { usedAt: 1 as const, _id: 1 as const }]) {
      const threshold = new Date(1000);
      const claims = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          c.findOneAndUpdate(
            { usedAt: { $lte: threshold } },
            { $set: { usedAt: new Date(), holder: `c${i}` } },
            { sort },
          ),
        ),
      );
      const winners = claims.filter((doc) => doc !== null);
      t.equal(winners.length, 10, `exactly 10 winners (sort: ${JSON.stringify(sort)})`);
      t.equal(new Set(winners.map((w) => w._id)).size, 10, 'each slot won once');
      for (const w of winners)
        t.equal((await c.findOne({ _id: w._id }))?.holder, w.holder, `${w._id} holds its winner`);
      await c.updateMany({}, { $set: { usedAt: new Date(0) }, $unset: { holder: '' } });
    }
  });

  run('a unique index lets exactly one of concurrent inserts of a key succeed', async (t, _store, collection) => {
    const c = collection('unique');
    await c.createIndex({ key: 1 }, { unique: true });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => c.insertOne({ _id: `i${i}`, key: 'same' })),
    );
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'one insert succeeds');
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    t.equal(errors.length, 19);
    t.ok(
      errors.every((e) => e instanceof DuplicateKeyError),
      'the others throw DuplicateKeyError',
    );
    t.equal(await c.count({ key: 'same' }), 1);
    await c.insertOne({ _id: 'other', key: 'different' });
    await expectDuplicate(
      t,
      c.findOneAndUpdate({ _id: 'up' }, { $set: { key: 'same' } }, { upsert: true }),
      'an upsert',
    );
    await expectDuplicate(t, c.findOneAndUpdate({ _id: 'other' }, { $set: { key: 'same' } }), 'an update');
    await expectDuplicate(t, c.updateMany({ _id: 'other' }, { $set: { key: 'same' } }), 'an updateMany');
    t.equal((await c.findOne({ _id: 'other' }))?.key, 'different', 'the failed updates changed nothing');

    const pairs = collection('unique2');
    await pairs.createIndex({ a: 1, b: 1 }, { unique: true });
    await pairs.insertOne({ _id: 'p1', a: 1, b: 1 });
    await pairs.insertOne({ _id: 'p2', a: 1, b: 2 });
    await pairs.insertOne({ _id: 'p3', a: 2, b: 1 });
    await expectDuplicate(t, pairs.insertOne({ _id: 'p4', a: 1, b: 1 }), 'a compound key');
  });

  run('createIndex is idempotent', async (t, _store, collection) => {
    const c = collection('indexes');
    await c.createIndex({ a: 1 });
    await c.createIndex({ a: 1 });
    await c.createIndex({ a: 1 }, { name: 'a_renamed' });
    await c.createIndex({ b: 1 }, { unique: true, name: 'b_unique' });
    await c.createIndex({ b: 1 }, { unique: true, name: 'b_unique' });
    await Promise.all(Array.from({ length: 5 }, () => c.createIndex({ c: 1, d: -1 })));
    await c.insertOne({ _id: 'x', a: 1, b: 1 });
    await c.insertOne({ _id: 'y', a: 1, b: 2 });
    await expectDuplicate(t, c.insertOne({ _id: 'z', a: 1, b: 1 }), 'the unique index still holds');
    t.equal(await c.count({ a: 1 }), 2);
  });

  run('updateMany applies $set, $inc, $push and $unset and counts matches', async (t, _store, collection) => {
    const c = collection('updates');
    await c.insertOne({ _id: 'm1', group: 'a', n: 1, sub: { keep: 1 } });
    await c.insertOne({ _id: 'm2', group: 'a', n: 5, log: ['old'] });
    await c.insertOne({ _id: 'm3', group: 'b', n: 7 });
    await c.insertOne({ _id: 'm4' });
    t.equal(await c.updateMany({ group: 'a' }, { $inc: { n: 2 }, $push: { log: 'x' }, $set: { 'sub.flag': true } }), 2);
    t.strictSame(await c.findOne({ _id: 'm1' }), {
      _id: 'm1',
      group: 'a',
      n: 3,
      sub: { keep: 1, flag: true },
      log: ['x'],
    });
    t.strictSame(await c.findOne({ _id: 'm2' }), {
      _id: 'm2',
      group: 'a',
      n: 7,
      log: ['old', 'x'],
      sub: { flag: true },
    });
    t.equal(await c.updateMany({ group: 'a' }, { $set: { group: 'a' } }), 2, 'counts matches, changed or not');
    t.equal(await c.updateMany({ group: 'b' }, { $unset: { n: '' } }), 1);
    t.strictSame(await c.findOne({ _id: 'm3' }), { _id: 'm3', group: 'b' }, '$unset removes the field');
    t.equal(await c.updateMany({ _id: 'm1' }, { $unset: { 'sub.flag': '' } }), 1);
    t.strictSame((await c.findOne({ _id: 'm1' }))?.sub, { keep: 1 }, '$unset on a dotted path');
    t.equal(await c.updateMany({ _id: 'm4' }, { $inc: { n: -3 } }), 1);
    t.equal(
      ((await c.findOne({ _id: 'm4' })) as { n?: number } | null)?.n,
      -3,
      '$inc on a missing field starts from 0',
    );
    t.equal(await c.updateMany({ group: 'none' }, { $set: { x: 1 } }), 0, 'no match');
    t.equal(await c.count({ x: 1 }), 0, 'updateMany never upserts');
  });

  run('deleteOne, deleteMany and count', async (t, _store, collection) => {
    const c = collection('deletes');
    for (const [i, g] of ['x', 'x', 'x', 'y', 'z'].entries()) await c.insertOne({ _id: `r${i}`, g });
    t.equal(await c.count(), 5);
    t.equal(await c.count({ g: 'x' }), 3);
    t.equal(await c.deleteOne({ g: 'x' }), 1, 'deleteOne deletes one');
    t.equal(await c.count({ g: 'x' }), 2);
    t.equal(await c.deleteOne({ g: 'nope' }), 0);
    t.equal(await c.deleteMany({ g: 'x' }), 2);
    t.equal(await c.deleteMany({ g: 'x' }), 0);
    t.equal(await c.count(), 2);
    t.equal(await c.deleteMany({}), 2, 'an empty filter deletes everything');
    t.equal(await c.count(), 0);
  });

  run('sweepExpired deletes documents whose expiresAt is at or before now', async (t, _store, collection) => {
    const c = collection('expiry');
    const now = new Date();
    await c.insertOne({ _id: 'past', expiresAt: new Date(now.getTime() - 1000) });
    await c.insertOne({ _id: 'now', expiresAt: now });
    await c.insertOne({ _id: 'future', expiresAt: new Date(now.getTime() + 60_000) });
    await c.insertOne({ _id: 'forever' });
    t.equal(await c.sweepExpired(now), 2);
    t.strictSame(
      (await c.find({}, { sort: { _id: 1 } })).map((d) => d._id),
      ['forever', 'future'],
    );
    await c.insertOne({ _id: 'just-gone', expiresAt: new Date(Date.now() - 1) });
    t.equal(await c.sweepExpired(), 1, 'now defaults to the current time');
    t.equal(await c.count(), 2);
  });

  run('collections are isolated', async (t, _store, collection) => {
    const a = collection('iso_a');
    const b = collection('iso_b');
    await a.insertOne({ _id: 'same', from: 'a' });
    await b.insertOne({ _id: 'same', from: 'b' });
    t.equal((await a.findOne({ _id: 'same' }))?.from, 'a');
    t.equal((await b.findOne({ _id: 'same' }))?.from, 'b');
    t.equal(await a.deleteMany({}), 1);
    t.equal(await b.count(), 1);
  });

  run('an undefined filter value is refused, never read as "any"', async (t, _store, collection) => {
    const c = collection('guards');
    await c.insertOne({ _id: 'a', v: 1 });
    await t.rejects(c.deleteMany({ v: undefined }), TypeError);
    await t.rejects(c.find({ $or: [{ v: { $eq: undefined } }] }), TypeError);
    t.equal(await c.count(), 1);
  });
}

async function expectDuplicate(t: Test, pending: Promise<unknown>, what = 'the insert'): Promise<void> {
  const outcome = await pending.then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(outcome instanceof DuplicateKeyError, `${what} throws DuplicateKeyError`, { found: outcome });
  t.equal((outcome as { code?: string } | undefined)?.code, 'DUPLICATE_KEY');
}
