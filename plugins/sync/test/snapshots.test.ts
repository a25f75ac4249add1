// D21: what each tenant last saw of a dossier or an invoice, kept per tenant, opcoId and kind,
// and the content hash that tells a dossier really changed whatever the order of its keys.
import t, { type Test } from 'tap';
import { createEmbeddedStore } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { Snapshots, contentHash } from '../src/snapshots.js';

async function snapshots(t: Test) {
  const store = await createEmbeddedStore({});
  t.teardown(() => store.close());
  const clock = new TestClock({ frozen: true });
  const kept = new Snapshots(store, clock);
  await kept.prepare();
  return { kept, clock };
}

t.test('a first put fills what it was not given with null; later puts change only their fields', async (t) => {
  const { kept, clock } = await snapshots(t);
  t.equal(await kept.get('t', 'o', 'dossier', '1'), null, 'nothing before the first put');
  await kept.put('t', 'o', 'dossier', '1', { etat: 'ENGAGE' });
  t.match(await kept.get('t', 'o', 'dossier', '1'), {
    tenant: 't',
    opcoId: 'o',
    kind: 'dossier',
    key: '1',
    etat: 'ENGAGE',
    hash: null,
    updatedAt: clock.date(),
  });
  await clock.advance(5000);
  await kept.put('t', 'o', 'dossier', '1', { hash: 'h1' });
  t.match(
    await kept.get('t', 'o', 'dossier', '1'),
    { etat: 'ENGAGE', hash: 'h1', updatedAt: clock.date() },
    'the state stays, the hash is set, the time moves',
  );
  await kept.put('t', 'o', 'dossier', '1', { etat: null });
  t.match(await kept.get('t', 'o', 'dossier', '1'), { etat: null, hash: 'h1' }, 'a state may go back to null');
});

t.test('snapshots of other tenants, opcoIds and kinds are apart', async (t) => {
  const { kept } = await snapshots(t);
  await kept.put('t1', 'o', 'dossier', '1', { etat: 'A' });
  await kept.put('t2', 'o', 'dossier', '1', { etat: 'B' });
  await kept.put('t1', 'p', 'dossier', '1', { etat: 'C' });
  await kept.put('t1', 'o', 'facture', '1', { etat: 'D' });
  const etats = await Promise.all(
    [
      ['t1', 'o', 'dossier'],
      ['t2', 'o', 'dossier'],
      ['t1', 'p', 'dossier'],
      ['t1', 'o', 'facture'],
    ].map(async ([tenant, opco, kind]) => (await kept.get(tenant, opco, kind as 'dossier', '1'))!.etat),
  );
  t.same(etats, ['A', 'B', 'C', 'D']);
});

t.test('contentHash: the same record in another key order has the same hash; another value does not', async (t) => {
  const a = { numeroInterne: '1', cerfa: { apprenti: { nom: 'N', prenom: 'P' }, x: [1, 2] } };
  const b = { cerfa: { x: [1, 2], apprenti: { prenom: 'P', nom: 'N' } }, numeroInterne: '1' };
  t.equal(contentHash(a), contentHash(b));
  t.match(contentHash(a), /^[0-9a-f]{64}$/);
  t.not(contentHash(a), contentHash({ ...a, cerfa: { ...a.cerfa, x: [2, 1] } }), 'array order counts');
  t.not(contentHash(a), contentHash({ ...a, numeroInterne: '2' }));
});
