import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { STATE_TYPOS, startSandbox } from '../src/server/index.js';
import { authHeaders, fetchToken, getJson } from './upstream-client.js';

const sandbox = await startSandbox({ pageSize: 50 });
t.teardown(() => sandbox.close());
const headers = authHeaders(await fetchToken(sandbox));
const { dossiers } = sandbox.dataset;
const byEtat = (etat: string) => dossiers.find((d) => d.etat === etat)!;

t.test('both quirks are on by default', async (t) => {
  t.same(sandbox.quirks, { stateTypos: true, bareArrays: true });
  t.same(STATE_TYPOS, { RUPTURE: 'RUTPURE', EN_COURS_INSTRUCTION: 'En cours', ENGAGE: 'Valide', REFUSE: 'Refuse' });
});

t.test('state typos on the wire in dossier, liste and etats', async (t) => {
  sandbox.quirks.stateTypos = true;
  const wire: Record<string, string> = {
    RUPTURE: 'RUTPURE',
    EN_COURS_INSTRUCTION: 'En cours',
    ENGAGE: 'Valide',
    REFUSE: 'Refuse',
    TRANSMIS: 'TRANSMIS',
    ANNULE: 'ANNULE',
    SOLDE: 'SOLDE',
  };
  for (const [etat, written] of Object.entries(wire)) {
    const d = byEtat(etat);
    const record = await getJson(sandbox, `/v2/dossiers?numeroInterne=${d.numeroInterne}`, headers);
    t.equal(record.body.etat, written, `${etat} is written ${written}`);
    const liste = await getJson(sandbox, `/v1/dossiers/liste?numerosInternes=${d.numeroInterne}`, headers);
    t.equal(liste.body.dossiers[0].etat, written);
  }
  const all = await getJson(sandbox, '/v2/dossiers/etats', headers);
  const states = new Set(all.body.map((i: { etat: string }) => i.etat));
  t.same([...states].sort(), ['ANNULE', 'En cours', 'RUTPURE', 'Refuse', 'SOLDE', 'TRANSMIS', 'Valide']);
  t.equal(byEtat('RUPTURE').etat, 'RUPTURE', 'the dataset itself keeps canonical states');
});

t.test('state typos off gives canonical states', async (t) => {
  sandbox.quirks.stateTypos = false;
  t.teardown(() => {
    sandbox.quirks.stateTypos = true;
  });
  const d = byEtat('RUPTURE');
  const record = await getJson(sandbox, `/v2/dossiers?numeroInterne=${d.numeroInterne}`, headers);
  t.equal(record.body.etat, 'RUPTURE');
  const all = await getJson(sandbox, '/v2/dossiers/etats', headers);
  const states = new Set(all.body.map((i: { etat: string }) => i.etat));
  t.same([...states].sort(), ['ANNULE', 'ENGAGE', 'EN_COURS_INSTRUCTION', 'REFUSE', 'RUPTURE', 'SOLDE', 'TRANSMIS']);
});

t.test('invoice states never carry typos', async (t) => {
  sandbox.quirks.stateTypos = true;
  const r = await getJson(sandbox, '/v1/factures/etats?numeroPage=1', headers);
  for (const f of r.body.factures) t.match(f.etatFacture, /^[A-Z_]+$/);
});

t.test('bare arrays: all matching items when no numeroPage is given', async (t) => {
  sandbox.quirks.bareArrays = true;
  const bare = await getJson(sandbox, '/v2/dossiers/etats', headers);
  t.ok(Array.isArray(bare.body));
  t.equal(bare.body.length, 300, 'not cut to the page size');
  t.strictSame(Object.keys(bare.body[0]), ['numeroExterne', 'numeroDeca', 'numeroInterne', 'etat']);
  const filtered = await getJson(sandbox, '/v2/dossiers/etats?anneeDossier=2019', headers);
  t.equal(filtered.body.length, dossiers.filter((d) => d.anneeDossier === 2019).length);
  const paged = await getJson(sandbox, '/v2/dossiers/etats?numeroPage=1', headers);
  t.notOk(Array.isArray(paged.body), 'an explicit page still gets the page object');
  t.match(paged.body, { status: 'success', total: 300, count: 50, page: 1 });
});

t.test('bare arrays off: page object even without numeroPage', async (t) => {
  sandbox.quirks.bareArrays = false;
  t.teardown(() => {
    sandbox.quirks.bareArrays = true;
  });
  const r = await getJson(sandbox, '/v2/dossiers/etats', headers);
  t.notOk(Array.isArray(r.body));
  t.match(r.body, { status: 'success', total: 300, count: 50, page: 1 });
  t.equal(r.body.EtatDossierResult.length, 50);
});

t.test('quirks can be set at start', async (t) => {
  const plain = await startSandbox({ dossierCount: 30, factureCount: 3, quirks: { stateTypos: false } });
  t.teardown(() => plain.close());
  t.same(plain.quirks, { stateTypos: false, bareArrays: true });
  const h = authHeaders(await fetchToken(plain));
  const r = await getJson(plain, '/v2/dossiers/etats', h);
  t.ok(Array.isArray(r.body));
  t.ok(r.body.every((i: { etat: string }) => /^[A-Z_]+$/.test(i.etat)));
});

t.test('advance shows up in etats from its date and in the record', async (t) => {
  const today = new Date().toISOString().slice(0, 10);
  sandbox.quirks.stateTypos = false;
  t.teardown(() => {
    sandbox.quirks.stateTypos = true;
  });
  const before = await getJson(sandbox, `/v2/dossiers/etats?dateModification=${today}`, headers);
  t.same(before.body, [], 'nothing modified today before advancing');
  const moved = sandbox.advance({ dossiers: 3, factures: 2 });
  const after = await getJson(sandbox, `/v2/dossiers/etats?dateModification=${today}`, headers);
  t.same(after.body.map((i: { numeroInterne: string }) => i.numeroInterne).sort(), [...moved.dossiers].sort());
  const record = await getJson(sandbox, `/v2/dossiers?numeroInterne=${moved.dossiers[0]}`, headers);
  t.equal(record.body.dateModification, today);
  t.equal(record.body.etat, sandbox.dataset.dossier(moved.dossiers[0])!.etat);
  const factures = await getJson(sandbox, `/v1/factures/etats?dateModification=${today}`, headers);
  t.same(
    factures.body.factures.map((f: { numeroInterneFacture: string }) => f.numeroInterneFacture).sort(),
    [...moved.factures].sort(),
  );
});

t.test('state changes over time: the control endpoint and the timer move records', async (t) => {
  const clock = new TestClock({ frozen: true });
  const sandbox = await startSandbox({
    dossierCount: 50,
    factureCount: 20,
    advanceEvery: { everyMs: 100, dossiers: 1, factures: 1 },
    clock,
  });
  t.teardown(() => sandbox.close());
  const before = sandbox.dataset.dossiers.map((d) => d.etat).join();
  const reply = await fetch(`${sandbox.url}/_sandbox/advance?dossiers=2&factures=1`, { method: 'POST' });
  t.equal(reply.status, 200);
  const moved = (await reply.json()) as { dossiers: string[]; factures: string[] };
  t.equal(moved.dossiers.length, 2);
  t.equal(moved.factures.length, 1);
  t.not(sandbox.dataset.dossiers.map((d) => d.etat).join(), before, 'states moved');
  const states = () => sandbox.dataset.dossiers.map((d) => d.etat).join();
  const afterControl = states();
  await clock.advance(99);
  t.equal(states(), afterControl, 'the timer waits its period');
  await clock.advance(1);
  const afterTick = states();
  t.not(afterTick, afterControl, 'the timer moves them when due');
  await clock.advance(100);
  t.not(states(), afterTick, 'and keeps moving them');
  t.equal(sandbox.received.length, 0, 'control calls are not part of the simulated API');
});
