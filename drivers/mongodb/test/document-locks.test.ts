// The document locks that make findOneAndUpdate atomic on FerretDB v1 (document-locks.ts), run
// against the real server: a holder that died mid-claim blocks its document only until its lock's
// lease ends, and a lease is short enough for the hub's failover bound (a standby leads within
// 5 s of the lapsed lease, issue 31; a 15 s lock made it 11 s in CI).
import t from 'tap';
import { MongoClient } from 'mongodb';
import { createStore } from '../src/index.js';
import { LOCKS_COLLECTION } from '../src/document-locks.js';

const url = process.env.MONGODB_URL;
const skip = url ? false : 'needs MONGODB_URL';

t.test(
  "a lock left by a dead holder blocks its document until the lock's lease ends, then the claim goes through once",
  { skip },
  async (t) => {
    const database = `document_locks_${process.pid}`;
    const client = await MongoClient.connect(url!);
    const store = await createStore({ url: url!, database, atomicity: 'lock' });
    t.teardown(async () => {
      await store.close();
      await client
        .db(database)
        .dropDatabase()
        .catch(() => undefined);
      await client.close();
    });
    const leases = store.collection<{ _id: string; holder: string | null }>('leases');
    await leases.insertMany([{ _id: 'lease-1', holder: null }]);
    // What a process killed between taking the lock and releasing it leaves behind.
    const deadUntil = Date.now() + 400;
    await client
      .db(database)
      .collection<{ _id: string }>(LOCKS_COLLECTION)
      .insertOne({ _id: 'leases/lease-1', token: 'dead', expiresAt: new Date(deadUntil) } as never);

    const claimed = await leases.findOneAndUpdate({ _id: 'lease-1', holder: null }, { $set: { holder: 'b' } });
    const at = Date.now();
    t.match(claimed, { _id: 'lease-1', holder: 'b' }, 'the claim goes through');
    t.ok(at >= deadUntil, `not before the dead holder's lock lapsed (${at - deadUntil} ms after)`);
    t.equal(
      await leases.findOneAndUpdate({ _id: 'lease-1', holder: null }, { $set: { holder: 'c' } }),
      null,
      'and once: the filter is checked under the lock',
    );
    t.equal(await client.db(database).collection(LOCKS_COLLECTION).countDocuments(), 0, 'no lock is left behind');
  },
);
