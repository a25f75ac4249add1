// Filters reshaped for FerretDB v1 (filter-pushdown.ts): the same matches, in shapes it hands to
// PostgreSQL, and sent so to FerretDB only (the store contract checks the results on both).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { flattened, MAX_SPLIT_VALUES, splitIn } from '../src/filter-pushdown.js';
import { createStore } from '../src/index.js';

t.test('flattened lifts an $and of distinct fields to the top level, and only that', async (t) => {
  const unheld = { $or: [{ leaseUntil: null }] };
  t.same(flattened({ $and: [{ status: 'pending' }, unheld, { nextAttemptAt: { $lte: 1 } }] }), {
    status: 'pending',
    $or: [{ leaseUntil: null }],
    nextAttemptAt: { $lte: 1 },
  });
  t.same(
    flattened({ _id: 'a', $and: [{ $and: [{ s: 1 }, { n: 2 }] }, { m: 3 }] }),
    { _id: 'a', s: 1, n: 2, m: 3 },
    'nested, beside top-level fields',
  );
  const twoOr = { $and: [{ $or: [{ a: 1 }] }, unheld] };
  t.equal(flattened(twoOr), twoOr, 'two $or stay apart');
  const oneField = { $and: [{ n: { $gt: 1 } }, { n: { $lt: 5 } }] };
  t.equal(flattened(oneField), oneField, 'two conditions on one field stay apart');
  const outside = { n: 1, $and: [{ n: { $lt: 5 } }] };
  t.equal(flattened(outside), outside, 'a field beside the $and and in it');
  t.same(flattened({ s: 1 }), { s: 1 });
});

t.test('splitIn: one filter per value of the first plain top-level $in of a few scalars', async (t) => {
  t.same(splitIn({ status: { $in: ['a', 'b', 'a'] }, n: 1 }), [
    { status: 'a', n: 1 },
    { status: 'b', n: 1 },
  ]);
  t.equal(splitIn({ status: 'a' }), null);
  t.equal(splitIn({ status: { $in: ['a'], $ne: 'b' } }), null, 'with another operator on the field');
  t.equal(splitIn({ status: { $in: [] } }), null, 'no value');
  t.equal(splitIn({ status: { $in: [{ a: 1 }] } }), null, 'a document value');
  t.equal(
    splitIn({ status: { $in: Array.from({ length: MAX_SPLIT_VALUES + 1 }, (_, i) => i) } }),
    null,
    'too many values',
  );
  t.equal(splitIn({ $or: [{ status: { $in: ['a', 'b'] } }] }), null, 'not at the top level');
});

const url = process.env.MONGODB_URL;
if (url) {
  t.test('FerretDB is sent equalities at the top level; MongoDB the filter as written', async (t) => {
    const client = await MongoClient.connect(url);
    const info = await client.db().command({ buildInfo: 1 });
    await client.close();
    const ferretDb = typeof info.ferretdbVersion === 'string' || Boolean(info.ferretdbFeatures);
    const finds: Record<string, unknown>[] = [];
    const name = `pushdown_${randomBytes(5).toString('hex')}`;
    const store = await createStore({
      url,
      onCommand: (event: CommandStartedEvent) => {
        if (event.commandName === 'find' && event.command.find === name)
          finds.push(event.command.filter as Record<string, unknown>);
      },
    });
    const c = store.collection<{ _id: string; s: string; n: number }>(name);
    t.teardown(async () => {
      await c.deleteMany({});
      await store.close();
    });
    await c.insertMany([
      { _id: 'a', s: 'p', n: 1 },
      { _id: 'b', s: 'q', n: 2 },
      { _id: 'c', s: 'r', n: 3 },
    ]);
    const found = await c.find(
      { $and: [{ s: { $in: ['p', 'q'] } }, { n: { $gte: 1 } }] },
      { sort: { n: -1 }, limit: 5 },
    );
    t.same(
      found.map((d) => d._id),
      ['b', 'a'],
    );
    if (ferretDb) {
      t.same(
        finds.sort((x, y) => String(x.s).localeCompare(String(y.s))),
        [
          { s: 'p', n: { $gte: 1 } },
          { s: 'q', n: { $gte: 1 } },
        ],
        'one search per value, clauses at the top',
      );
    } else {
      t.same(finds, [{ $and: [{ s: { $in: ['p', 'q'] } }, { n: { $gte: 1 } }] }], 'one search, as written');
    }
  });
}
