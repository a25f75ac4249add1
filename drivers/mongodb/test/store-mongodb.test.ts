import t from 'tap';
import { MongoClient } from 'mongodb';
import type { Store } from '@opco-proxy/core';
import { storeContract } from '@opco-proxy/core/store-contract';
import { createStore } from '../src/index.js';

const url = process.env.MONGODB_URL;

if (!url) {
  if (process.env.REQUIRE_MONGODB === '1') {
    t.fail('REQUIRE_MONGODB=1 but MONGODB_URL is not set: the MongoDB store contract cannot run');
  } else {
    t.plan(0, 'MONGODB_URL is not set; run with MONGODB_URL=mongodb://127.0.0.1:27017/test to test the MongoDB store');
  }
} else {
  t.test('the store contract on MongoDB', async (t) => {
    // The port has no drop; remember every collection the contract opens and drop it afterwards.
    const opened = new Set<string>();
    const tracked = (store: Store): Store =>
      Object.assign(Object.create(store) as Store, {
        collection(name: string) {
          opened.add(name);
          return store.collection(name);
        },
      });
    t.teardown(async () => {
      const client = await MongoClient.connect(url);
      try {
        const db = client.db();
        for (const name of opened)
          await db
            .collection(name)
            .drop()
            .catch(() => undefined);
      } finally {
        await client.close();
      }
    });
    storeContract(t, async () => tracked(await createStore({ url })));
  });

  t.test('kind is mongodb and the database option is honoured', async (t) => {
    const store = await createStore({ url, database: `contract_db_${process.pid}` });
    t.teardown(() => store.close());
    t.equal(store.kind, 'mongodb');
    await store.ping();
  });
}
