// The cache's two layers (issue 11): a hit from the in-process LRU costs no store call (counted
// through a real embedded store), instances share entries through the Store, tenants never
// read each other's, the LRU's entry and byte bounds, expiry on the injected clock, and no store
// copy at all on the embedded store.
import t from 'tap';
import { createEmbeddedStore, type Collection, type Store } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { authenticate } from '@opco-proxy/core/application';
import { startService, KEY_A, KEY_B } from '../src/index.js';

/** A real embedded store whose `cache` collection counts its calls; `shared` picks the plugin's layering. */
async function countingStore(
  kind: string,
  shared = true,
): Promise<{ store: Store; calls: () => number; reset(): void }> {
  const inner = await createEmbeddedStore();
  let calls = 0;
  const store: Store = {
    kind,
    shared,
    collection<T extends { _id: string }>(name: string): Collection<T> {
      const collection = inner.collection<T>(name);
      if (name !== 'cache') return collection;
      return new Proxy(collection, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            calls += 1;
            return value.apply(target, args);
          };
        },
      });
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, calls: () => calls, reset: () => void (calls = 0) };
}

const clock = new TestClock({ frozen: true });
const opco = { cacheTtlS: { 'GET /dossiers/etats': 60 } };
const shared = await countingStore('counted');
const one = await startService({ clock, opco, store: shared.store });
const two = await startService({ clock, opco, store: shared.store, upstream: one.sandbox });
t.teardown(async () => {
  await two.close();
  await one.close();
  await shared.store.close();
});
const { sandbox } = one;
const etatsCalls = () => sandbox.received.filter((r) => r.path === '/v2/dossiers/etats').length;

t.test('a hit from memory costs no store call; another instance reads the Store once, then its memory', async (t) => {
  sandbox.resetStats();
  t.equal((await one.get('/sandbox/dossiers/etats?numeroPage=1')).headers.get('x-cache'), 'MISS');
  t.ok(shared.calls() > 0, 'the miss looked in the Store and wrote the entry there');
  shared.reset();
  const hit = await one.get('/sandbox/dossiers/etats?numeroPage=1');
  t.equal(hit.headers.get('x-cache'), 'HIT');
  t.equal(shared.calls(), 0, 'no store call for a hit from memory');
  t.equal(
    (await two.get('/sandbox/dossiers/etats?numeroPage=1')).headers.get('x-cache'),
    'HIT',
    'the other instance finds it in the Store',
  );
  t.equal(shared.calls(), 1, 'one store read');
  shared.reset();
  const again = await two.get('/sandbox/dossiers/etats?numeroPage=1');
  t.equal(again.headers.get('x-cache'), 'HIT');
  t.equal(shared.calls(), 0, 'then from its own memory');
  t.same(again.body, hit.body);
  t.equal(etatsCalls(), 1, 'one upstream call in all');

  // What the memory layer holds is the UTF-8 bytes that were written, not a string to encode per hit.
  const call = one.kernel.opcos.context('sandbox', 'GET /dossiers/etats', authenticate(KEY_A), {
    query: { numeroPage: '1' },
    synchronous: true,
  });
  const kept = one.kernel.pipeline.peek(call);
  t.ok(Buffer.isBuffer(kept), 'the memory layer answers with bytes');
  t.equal(kept?.toString('utf8'), JSON.stringify(hit.body), 'the bytes of the answer the client got');
});

t.test("tenants never read each other's entries, in memory or in the Store", async (t) => {
  sandbox.resetStats();
  await one.get('/sandbox/dossiers/etats?numeroPage=2', { key: KEY_A });
  const b = await one.get('/sandbox/dossiers/etats?numeroPage=2', { key: KEY_B });
  t.equal(b.headers.get('x-cache'), 'MISS', 'same instance, other tenant');
  const bOnTwo = await two.get('/sandbox/dossiers/etats?numeroPage=3', { key: KEY_B });
  const aOnTwo = await two.get('/sandbox/dossiers/etats?numeroPage=3', { key: KEY_A });
  t.equal(bOnTwo.headers.get('x-cache'), 'MISS');
  t.equal(aOnTwo.headers.get('x-cache'), 'MISS', 'other instance, other tenant');
  t.equal(etatsCalls(), 4);
  t.same(
    sandbox.received.map((r) => r.headers['x-api-key']),
    [KEY_A, KEY_B, KEY_B, KEY_A],
    'each tenant reached the upstream with its own key',
  );
});

t.test('an entry expires after its lifetime in memory and in the Store', async (t) => {
  sandbox.resetStats();
  await one.get('/sandbox/dossiers/etats?numeroPage=4');
  await clock.advance(59_999);
  t.equal((await one.get('/sandbox/dossiers/etats?numeroPage=4')).headers.get('x-cache'), 'HIT');
  await clock.advance(1);
  t.equal((await one.get('/sandbox/dossiers/etats?numeroPage=4')).headers.get('x-cache'), 'MISS', 'expired in memory');
  t.equal(etatsCalls(), 2);
});

t.test('the memory keeps at most maxEntries answers and maxBytes bytes; the Store keeps the rest', async (t) => {
  const counted = await countingStore('counted');
  const small = await startService({
    clock,
    opco,
    store: counted.store,
    upstream: sandbox,
    config: { cache: { maxEntries: 2 } },
  });
  const tiny = await startService({
    clock,
    opco,
    store: counted.store,
    upstream: sandbox,
    config: { cache: { maxBytes: 100 } },
  });
  t.teardown(async () => {
    await small.close();
    await tiny.close();
    await counted.store.close();
  });
  for (const page of [1, 2, 3]) await small.get(`/sandbox/dossiers/etats?numeroPage=${page}`);
  counted.reset();
  t.equal((await small.get('/sandbox/dossiers/etats?numeroPage=3')).headers.get('x-cache'), 'HIT');
  t.equal(counted.calls(), 0, 'the most recent is in memory');
  t.equal((await small.get('/sandbox/dossiers/etats?numeroPage=1')).headers.get('x-cache'), 'HIT');
  t.equal(counted.calls(), 1, 'the oldest of three left the memory: read from the Store');

  await tiny.get('/sandbox/dossiers/etats?numeroPage=1');
  counted.reset();
  t.equal((await tiny.get('/sandbox/dossiers/etats?numeroPage=1')).headers.get('x-cache'), 'HIT');
  t.equal((await tiny.get('/sandbox/dossiers/etats?numeroPage=1')).headers.get('x-cache'), 'HIT');
  t.equal(counted.calls(), 2, 'an answer over maxBytes is never kept in memory: each hit reads the Store');
});

t.test('on the embedded store the bounded memory is the whole cache', async (t) => {
  const embedded = await countingStore('embedded', false);
  const service = await startService({ clock, opco, store: embedded.store, upstream: sandbox });
  t.teardown(async () => {
    await service.close();
    await embedded.store.close();
  });
  sandbox.resetStats();
  t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=5')).headers.get('x-cache'), 'MISS');
  t.equal((await service.get('/sandbox/dossiers/etats?numeroPage=5')).headers.get('x-cache'), 'HIT');
  t.equal(embedded.calls(), 0, 'no copy in the embedded store');
  t.equal(etatsCalls(), 1);
});
