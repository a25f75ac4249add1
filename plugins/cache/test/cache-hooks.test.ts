// The cache plugin's hooks on a real kernel, embedded store and upstream: a miss then a hit, expiry
// to the millisecond on the TestClock, tenants kept apart and writes never cached, for each of its
// two layers (the in-process memory, and the Store alone when the memory is off).
import t from 'tap';
import { createEmbeddedStore } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { authenticate } from '@opco-proxy/core/application';
import { KEY_A, KEY_B, TTL_S, startCacheKernel } from './fixtures/cache-kernel.js';

const ETATS = '/up/dossiers/etats?numeroPage=1';
const LAYERS = { memory: {}, 'store alone': { maxEntries: 0 } };

for (const [layer, cache] of Object.entries(LAYERS)) {
  t.test(`${layer}: a miss goes upstream, the same read then is a hit with the same answer`, async (t) => {
    const rig = await startCacheKernel(t, { cache });
    const miss = await rig.get(ETATS);
    t.same([miss.status, miss.cache, miss.body.serial], [200, 'MISS', 1]);
    const hit = await rig.get(ETATS);
    t.same([hit.status, hit.cache, hit.body], [200, 'HIT', miss.body], 'the first answer, kept');
    t.same(rig.upstream.received, ['GET /etats?numeroPage=1'], 'one upstream call');
    const other = await rig.get('/up/dossiers/etats?numeroPage=2');
    t.same([other.cache, other.body.serial], ['MISS', 2], 'another query, another entry');
  });

  t.test(`${layer}: an entry lives its lifetime on the kernel's clock, to the millisecond`, async (t) => {
    const rig = await startCacheKernel(t, { cache });
    t.equal((await rig.get(ETATS)).cache, 'MISS');
    await rig.clock.advance(TTL_S * 1000 - 1);
    const last = await rig.get(ETATS);
    t.same([last.cache, last.body.serial], ['HIT', 1], 'alive until its last millisecond');
    await rig.clock.advance(1);
    const expired = await rig.get(ETATS);
    t.same([expired.cache, expired.body.serial], ['MISS', 2], 'expired: read upstream again');
    t.same([(await rig.get(ETATS)).body.serial, rig.upstream.received.length], [2, 2], 'and the new answer kept');
  });

  t.test(`${layer}: no tenant reads another's entry`, async (t) => {
    const rig = await startCacheKernel(t, { cache });
    const a = await rig.get(ETATS, KEY_A);
    const b = await rig.get(ETATS, KEY_B);
    t.same([a.cache, b.cache], ['MISS', 'MISS'], "B does not get A's answer");
    t.same([b.body.serial, rig.upstream.received.length], [2, 2], 'B had its own upstream call');
    const bAgain = await rig.get(ETATS, KEY_B);
    const aAgain = await rig.get(ETATS, KEY_A);
    t.same([bAgain.cache, bAgain.body.serial], ['HIT', 2], 'B then reads its own entry');
    t.same([aAgain.cache, aAgain.body.serial], ['HIT', 1], 'and A still its own');
  });

  t.test(`${layer}: a POST is never cached, even on a route given a lifetime`, async (t) => {
    const rig = await startCacheKernel(t, { cache });
    const tenant = authenticate(KEY_A);
    const served: unknown[] = [];
    for (let n = 0; n < 2; n++) {
      const input = { body: { numeroExterne: 'X-1' }, synchronous: true };
      const ctx = rig.kernel.opcos.context('up', 'POST /dossiers', tenant, input);
      served.push((await rig.kernel.pipeline.serve(ctx)).body, ctx.cache);
    }
    const answer = (serial: number) => ({ status: 'ok', EtatDossierResult: [], serial });
    t.same(served, [answer(1), 'none', answer(2), 'none'], 'two fresh answers, no lookup');
    t.same(rig.upstream.received, ['POST /dossiers', 'POST /dossiers'], 'each POST reached the upstream');
    t.equal(await rig.store.collection('cache').count(), 0, 'nothing kept in the Store');
  });
}

t.test("store alone: the entry is kept under the tenant's hash with its expiry, and read back", async (t) => {
  const rig = await startCacheKernel(t, { cache: { maxEntries: 0 } });
  const storedAt = rig.clock.now();
  await rig.get(ETATS);
  const entries = await rig.store.collection<{ _id: string; expiresAt: Date; payload: string }>('cache').find({});
  t.equal(entries.length, 1);
  t.match(entries[0], { tenant: authenticate(KEY_A).hash, opcoId: 'up', route: 'GET /dossiers/etats' });
  t.equal(entries[0].expiresAt.getTime(), storedAt + TTL_S * 1000);
  t.same(JSON.parse(entries[0].payload), { status: 'ok', EtatDossierResult: [], serial: 1 });
  t.equal((await rig.get(ETATS)).cache, 'HIT', 'read back from the Store');
});

t.test('on the embedded store the memory is the whole cache: nothing is written to the Store', async (t) => {
  const rig = await startCacheKernel(t);
  await rig.get(ETATS);
  t.equal((await rig.get(ETATS)).cache, 'HIT');
  t.equal(await rig.store.collection('cache').count(), 0);
});

t.test('two kernels on one store and one clock keep their own memories', async (t) => {
  const store = await createEmbeddedStore({});
  const clock = new TestClock({ frozen: true });
  const one = await startCacheKernel(t, { store, clock });
  const two = await startCacheKernel(t, { store, clock });
  t.teardown(() => store.close());
  t.equal((await one.get(ETATS)).cache, 'MISS');
  t.equal((await one.get(ETATS)).cache, 'HIT');
  t.equal((await two.get(ETATS)).cache, 'MISS', "what the first kernel holds is not the second one's");
  t.equal((await two.get(ETATS)).cache, 'HIT');
});
