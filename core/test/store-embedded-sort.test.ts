import t from 'tap';
import { createEmbeddedStore } from '../src/store/embedded-store.js';
import { compareValues, valueAt } from '../src/store/document-order.js';
import { inSortOrder } from '../src/store/sort-order.js';

type Row = { _id: string; [field: string]: unknown };

/** The store's order (nedb's, kept), by a stable sort of every match, then the slice. */
function nedbOrder(docs: Row[], sort: Record<string, 1 | -1>, skip = 0, limit?: number): Row[] {
  const sorted = [...docs].sort((a, b) => {
    for (const [field, direction] of Object.entries(sort)) {
      const order = direction * compareValues(valueAt(a, field), valueAt(b, field));
      if (order !== 0) return order;
    }
    return 0;
  });
  return sorted.slice(skip, limit === undefined ? undefined : skip + limit);
}

/** Few distinct values, so ties are common; mixed types, Dates, missing and nested fields. */
function rows(count: number, seed: number): Row[] {
  let state = seed;
  const next = (n: number) => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);
  const values = [1, 2, 'a', 'b', null, true, new Date(1000), new Date(2000), undefined];
  return Array.from({ length: count }, (_, i) => ({
    _id: `r${i}`,
    n: next(5),
    v: values[next(values.length)],
    sub: { at: new Date(next(4) * 1000) },
  }));
}

t.test('a sort with a small limit keeps what a full sort would give, ties in the order found', async (t) => {
  const cases: Array<[Record<string, 1 | -1>, number, number | undefined]> = [
    [{ n: 1 }, 0, 1],
    [{ n: -1 }, 0, 3],
    [{ v: 1 }, 2, 5],
    [{ 'sub.at': 1, n: -1 }, 0, 10],
    [{ n: 1, v: -1 }, 7, 4],
    [{ v: -1 }, 0, undefined],
    [{ n: 1 }, 190, 20],
  ];
  for (let seed = 1; seed <= 20; seed++) {
    const docs = rows(200, seed);
    for (const [sort, skip, limit] of cases) {
      const got = inSortOrder(docs, sort, skip, limit).map((d) => d._id);
      t.strictSame(
        got,
        nedbOrder(docs, sort, skip, limit).map((d) => d._id),
        `seed ${seed}, sort ${JSON.stringify(sort)}, skip ${skip}, limit ${limit}`,
      );
    }
  }
});

t.test('the collection sorts the stored documents and hands out copies', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const c = store.collection<Row>('sorted');
  await c.insertMany(
    Array.from({ length: 100 }, (_, i) => ({
      _id: `d${String(i).padStart(3, '0')}`,
      at: new Date(10_000 - i),
      k: i % 3,
    })),
  );
  const [oldest] = await c.find({ k: 0 }, { sort: { at: 1 }, limit: 1 });
  t.equal(oldest?._id, 'd099', 'the oldest of the matches, not the first stored');
  (oldest.at as Date).setTime(0);
  const [again] = await c.find({ k: 0 }, { sort: { at: 1 }, limit: 1 });
  t.equal((again.at as Date).getTime(), 10_000 - 99, 'changing a returned Date changes nothing stored');
  const claimed = await c.findOneAndUpdate(
    { k: 1 },
    { $set: { k: 9 } },
    { sort: { at: -1 }, returnDocument: 'before' },
  );
  t.strictSame(
    [claimed?._id, claimed?.k],
    ['d001', 1],
    'findOneAndUpdate with a sort picks the first in order and returns it as it was',
  );
  t.equal((await c.findOne({ _id: 'd001' }))?.k, 9, 'and changed it');
});
