import t from 'tap';
import { startSandbox } from '../src/server/index.js';
import { authHeaders, fetchToken, getJson, postJson } from './upstream-client.js';

// Typos and bare arrays off: this file checks shapes and filters; quirks.test.ts checks quirks.
const sandbox = await startSandbox({ pageSize: 25, quirks: { stateTypos: false, bareArrays: false } });
t.teardown(() => sandbox.close());
const headers = authHeaders(await fetchToken(sandbox));
const { dossiers, factures } = sandbox.dataset;

t.test('GET /v1/status', async (t) => {
  const r = await getJson(sandbox, '/v1/status', headers);
  t.equal(r.status, 200);
  t.same(r.body, { status: 'UP', versions: ['1.0', '1.1'] });
});

t.test('GET /v2/dossiers by numeroInterne gives the full record', async (t) => {
  const d = dossiers[123];
  const r = await getJson(sandbox, `/v2/dossiers?numeroInterne=${d.numeroInterne}`, headers);
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^application\/json/);
  t.strictSame(Object.keys(r.body), [
    'status',
    'engagement',
    'etat',
    'numeroInterne',
    'numeroExterne',
    'numeroDeca',
    'dateModification',
    'cerfa',
    'echeances',
    'detailsFacturation',
    'engagementsFraisAnnexe',
  ]);
  t.equal(r.body.status, 'success');
  t.equal(r.body.numeroInterne, d.numeroInterne);
  t.equal(r.body.etat, d.etat);
  t.equal(r.body.engagement, d.engagement);
  t.same(r.body.cerfa, d.cerfa);
  t.match(r.body.cerfa, {
    employeur: { siret: /^\d{14}$/, denomination: String },
    apprenti: { nom: String, prenom: String, dateNaissance: /^\d{4}-\d{2}-\d{2}$/ },
    contrat: { dateDebutContrat: /^\d{4}-\d{2}-\d{2}$/, dateFinContrat: /^\d{4}-\d{2}-\d{2}$/ },
    formation: { rncp: /^RNCP\d+$/, intituleQualification: String },
    organismeFormation: { siret: /^\d{14}$/ },
  });
  t.ok(Array.isArray(r.body.echeances) && r.body.echeances.length > 0);
  t.ok(Array.isArray(r.body.engagementsFraisAnnexe));
  t.type(r.body.detailsFacturation, 'object');
});

t.test('GET /v2/dossiers by numeroExterne and numeroDeca', async (t) => {
  const d = dossiers[7];
  const r = await getJson(sandbox, `/v2/dossiers?numeroExterne=${d.numeroExterne}&numeroDeca=${d.numeroDeca}`, headers);
  t.equal(r.status, 200);
  t.equal(r.body.numeroInterne, d.numeroInterne);
  const mismatch = await getJson(
    sandbox,
    `/v2/dossiers?numeroExterne=${d.numeroExterne}&numeroDeca=00000000000000`,
    headers,
  );
  t.equal(mismatch.status, 404);
  const aloneR = await getJson(sandbox, `/v2/dossiers?numeroExterne=${d.numeroExterne}`, headers);
  t.equal(aloneR.body.numeroInterne, d.numeroInterne, 'numeroExterne alone is accepted');
});

t.test('GET /v2/dossiers errors', async (t) => {
  const unknown = await getJson(sandbox, '/v2/dossiers?numeroInterne=DOS-1999-999999', headers);
  t.equal(unknown.status, 404);
  t.same(unknown.body, { status: 'error', message: 'Dossier introuvable' });
  for (const q of [
    '',
    '?numeroDeca=1',
    `?numeroInterne=${dossiers[0].numeroInterne}&numeroExterne=x`,
    '?numeroInterne=',
  ]) {
    const r = await getJson(sandbox, `/v2/dossiers${q}`, headers);
    t.equal(r.status, 400, `query "${q}" is refused`);
    t.equal(r.body.status, 'error');
  }
});

t.test('GET /v2/dossiers/etats pages through everything', async (t) => {
  const first = await getJson(sandbox, '/v2/dossiers/etats', headers);
  t.equal(first.status, 200);
  t.equal(first.body.status, 'success');
  t.equal(first.body.total, 300);
  t.equal(first.body.count, 25);
  t.equal(first.body.page, 1);
  t.strictSame(first.body.EtatDossierResult[0], {
    numeroExterne: dossiers[0].numeroExterne,
    numeroDeca: dossiers[0].numeroDeca,
    numeroInterne: dossiers[0].numeroInterne,
    etat: dossiers[0].etat,
  });
  const seen: string[] = [];
  for (let page = 1; page <= 12; page++) {
    const r = await getJson(sandbox, `/v2/dossiers/etats?numeroPage=${page}`, headers);
    t.equal(r.body.page, page);
    seen.push(...r.body.EtatDossierResult.map((i: { numeroInterne: string }) => i.numeroInterne));
  }
  t.same(
    seen,
    dossiers.map((d) => d.numeroInterne),
    'pages cover the dataset once, in order',
  );
  const beyond = await getJson(sandbox, '/v2/dossiers/etats?numeroPage=13', headers);
  t.equal(beyond.body.count, 0);
  t.equal(beyond.body.total, 300);
  t.same(beyond.body.EtatDossierResult, []);
});

t.test('GET /v2/dossiers/etats filters by year and modification date', async (t) => {
  const year = await getJson(sandbox, '/v2/dossiers/etats?anneeDossier=2021&numeroPage=1', headers);
  const expected2021 = dossiers.filter((d) => d.anneeDossier === 2021);
  t.equal(year.body.total, expected2021.length);
  t.ok(year.body.EtatDossierResult.every((i: { numeroInterne: string }) => i.numeroInterne.startsWith('DOS-2021-')));
  const since = '2025-06-01';
  const recent = dossiers.filter((d) => d.dateModification >= since);
  const r = await getJson(sandbox, `/v2/dossiers/etats?dateModification=${since}`, headers);
  t.ok(recent.length > 0 && recent.length < 300, 'the filter is selective');
  t.equal(r.body.total, recent.length);
  const both = await getJson(sandbox, `/v2/dossiers/etats?anneeDossier=2025&dateModification=${since}`, headers);
  t.equal(both.body.total, recent.filter((d) => d.anneeDossier === 2025).length);
  const none = await getJson(sandbox, '/v2/dossiers/etats?anneeDossier=2010', headers);
  t.equal(none.body.total, 0);
  for (const q of [
    'anneeDossier=21',
    'dateModification=2025-13-01',
    'dateModification=01/02/2025',
    'numeroPage=0',
    'numeroPage=x',
  ]) {
    t.equal((await getJson(sandbox, `/v2/dossiers/etats?${q}`, headers)).status, 400, `${q} is refused`);
  }
});

t.test('GET /v1/dossiers/liste', async (t) => {
  const wanted = [dossiers[3].numeroInterne, 'DOS-0000-000000', dossiers[200].numeroInterne];
  const r = await getJson(sandbox, `/v1/dossiers/liste?numerosInternes=${wanted.join(',')}`, headers);
  t.equal(r.status, 200);
  t.equal(r.body.status, 'success');
  t.same(
    r.body.dossiers.map((d: { numeroInterne: string }) => d.numeroInterne),
    [wanted[0], wanted[2]],
  );
  t.same(r.body.dossiers[1].cerfa, dossiers[200].cerfa);
  t.equal(r.body.dossiers[0].status, 'success');
  t.same(r.body.numerosInternesIntrouvables, ['DOS-0000-000000']);
  const fifty = dossiers
    .slice(0, 50)
    .map((d) => d.numeroInterne)
    .join(',');
  const ok50 = await getJson(sandbox, `/v1/dossiers/liste?numerosInternes=${fifty}`, headers);
  t.equal(ok50.body.dossiers.length, 50);
  const tooMany = dossiers
    .slice(0, 51)
    .map((d) => d.numeroInterne)
    .join(',');
  t.equal((await getJson(sandbox, `/v1/dossiers/liste?numerosInternes=${tooMany}`, headers)).status, 400);
  t.equal((await getJson(sandbox, '/v1/dossiers/liste', headers)).status, 400);
});

t.test('GET /v1/factures/etats shape, paging and filters', async (t) => {
  const r = await getJson(sandbox, '/v1/factures/etats', headers);
  t.equal(r.status, 200);
  t.match(r.body, { status: 'success', total: 120, count: 25, page: 1 });
  const f = factures[0];
  t.strictSame(r.body.factures[0], {
    numeroInterneFacture: f.numeroInterneFacture,
    referenceFactureCFA: f.referenceFactureCFA,
    organismeFormation: { siret: f.organismeFormation.siret, IBAN: f.organismeFormation.IBAN },
    montantFacture: f.montantFacture,
    etatFacture: f.etatFacture,
    referenceVirement: f.referenceVirement,
    dateReglement: f.dateReglement,
    commentaire: f.commentaire,
    dossiers: f.dossiers,
  });
  const last = await getJson(sandbox, '/v1/factures/etats?numeroPage=5', headers);
  t.equal(last.body.count, 20);
  t.equal(last.body.factures.at(-1).numeroInterneFacture, factures[119].numeroInterneFacture);

  const year = factures[10].anneeFacture;
  const byYear = await getJson(sandbox, `/v1/factures/etats?anneeFacture=${year}`, headers);
  t.equal(byYear.body.total, factures.filter((x) => x.anneeFacture === year).length);
  const line = factures[10].dossiers[0];
  const byDossier = await getJson(
    sandbox,
    `/v1/factures/etats?numeroInterneDossier=${line.numeroInterneDossier}`,
    headers,
  );
  t.equal(
    byDossier.body.total,
    factures.filter((x) => x.dossiers.some((l) => l.numeroInterneDossier === line.numeroInterneDossier)).length,
  );
  t.ok(
    byDossier.body.factures.some(
      (x: { numeroInterneFacture: string }) => x.numeroInterneFacture === factures[10].numeroInterneFacture,
    ),
  );
  const byExterne = await getJson(
    sandbox,
    `/v1/factures/etats?numeroExterneDossier=${line.numeroExterneDossier}`,
    headers,
  );
  t.equal(byExterne.body.total, byDossier.body.total);
  const byRef = await getJson(
    sandbox,
    `/v1/factures/etats?referenceFactureCFA=${factures[10].referenceFactureCFA}`,
    headers,
  );
  t.equal(byRef.body.factures[0].numeroInterneFacture, factures[10].numeroInterneFacture);
  const paid = factures.find((x) => x.etatFacture === 'REGLE')!;
  const byVirement = await getJson(sandbox, `/v1/factures/etats?referenceVirement=${paid.referenceVirement}`, headers);
  t.same(
    byVirement.body.factures.map((x: { numeroInterneFacture: string }) => x.numeroInterneFacture),
    [paid.numeroInterneFacture],
  );
  const since = '2024-01-01';
  const bySince = await getJson(sandbox, `/v1/factures/etats?dateModification=${since}`, headers);
  t.equal(bySince.body.total, factures.filter((x) => x.dateModification >= since).length);
  t.equal((await getJson(sandbox, '/v1/factures/etats?anneeFacture=abcd', headers)).status, 400);
});

t.test('GET /v1/cfakeyinfo', async (t) => {
  const r = await getJson(sandbox, '/v1/cfakeyinfo?siren=123456789&XAPIKEY=abc', headers);
  t.equal(r.status, 200);
  t.same(r.body, { status: 'success', dateFinValidite: '2027-12-31', comment: null });
  t.equal((await getJson(sandbox, '/v1/cfakeyinfo?siren=123456789', headers)).status, 400);
  t.equal((await getJson(sandbox, '/v1/cfakeyinfo?XAPIKEY=abc', headers)).status, 400);
  t.equal((await getJson(sandbox, '/v1/cfakeyinfo?siren=12345&XAPIKEY=abc', headers)).status, 400);
});

t.test('POST /v1/dossiers creates a readable dossier', async (t) => {
  const cerfa = {
    employeur: { siret: '73282932000074', denomination: 'BOULANGERIE TEST' },
    apprenti: { nom: 'DURAND', prenom: 'LÉA', dateNaissance: '2006-04-02' },
    contrat: { dateDebutContrat: '2026-09-01', dateFinContrat: '2028-08-31' },
    formation: { rncp: 'RNCP37859', intituleQualification: 'CAP Boulanger' },
    organismeFormation: { siret: '13002526500013' },
  };
  const created = await postJson(sandbox, '/v1/dossiers', headers, { cerfa, numeroExterne: 'CFA-REF-42' });
  t.equal(created.status, 201);
  t.same(created.body, {
    status: 'success',
    numeroInterne: 'DOS-NEW-000001',
    numeroExterne: 'CFA-REF-42',
    comment: null,
  });
  const read = await getJson(sandbox, '/v2/dossiers?numeroInterne=DOS-NEW-000001', headers);
  t.equal(read.status, 200);
  t.same(read.body.cerfa, cerfa);
  t.equal(read.body.etat, 'TRANSMIS');
  const byExterne = await getJson(sandbox, '/v2/dossiers?numeroExterne=CFA-REF-42', headers);
  t.equal(byExterne.body.numeroInterne, 'DOS-NEW-000001', 'found again by numeroExterne (crash-safe check)');
  const etats = await getJson(sandbox, '/v2/dossiers/etats?anneeDossier=2026', headers);
  t.same(
    etats.body.EtatDossierResult.map((i: { numeroInterne: string }) => i.numeroInterne),
    ['DOS-NEW-000001'],
  );
  const second = await postJson(sandbox, '/v1/dossiers', headers, { cerfa });
  t.equal(second.body.numeroInterne, 'DOS-NEW-000002');
  t.equal(second.body.numeroExterne, 'EXT-NEW-000002');
});

t.test('POST /v1/dossiers refuses a body without cerfa', async (t) => {
  const r = await postJson(sandbox, '/v1/dossiers', headers, { apprenti: {} });
  t.equal(r.status, 422);
  t.equal(r.body.status, 'error');
  const broken = await fetch(`${sandbox.url}/v1/dossiers`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"cerfa":',
  });
  t.equal(broken.status, 400);
});

t.test('unknown routes and wrong methods', async (t) => {
  t.equal((await getJson(sandbox, '/v3/nothing', headers)).status, 404);
  const wrong = await fetch(`${sandbox.url}/v1/status`, { method: 'DELETE', headers });
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.get('allow'), 'GET');
});

t.test('received and stats record every non-token request', async (t) => {
  sandbox.resetStats();
  const heldReceived = sandbox.received;
  await getJson(sandbox, '/v2/dossiers/etats?anneeDossier=2020&numeroPage=2', headers);
  await getJson(sandbox, '/v2/dossiers/etats?numeroPage=1', headers);
  await postJson(sandbox, '/v1/dossiers', headers, { cerfa: { apprenti: { nom: 'X' } } });
  await getJson(sandbox, '/v1/status', {});
  t.equal(sandbox.received.length, 4);
  t.equal(heldReceived, sandbox.received, 'same array after resetStats');
  t.match(sandbox.received[0], {
    method: 'GET',
    path: '/v2/dossiers/etats',
    query: { anneeDossier: '2020', numeroPage: '2' },
  });
  t.equal(sandbox.received[0].headers['x-api-key'], headers['x-api-key']);
  t.same(sandbox.received[2].json, { cerfa: { apprenti: { nom: 'X' } } });
  t.same(sandbox.stats.calls, { 'GET /v2/dossiers/etats': 2, 'POST /v1/dossiers': 1, 'GET /v1/status': 1 });
  t.equal(sandbox.stats.tokenRequests, 0);
  sandbox.resetStats();
  t.equal(sandbox.received.length, 0);
  t.same(sandbox.stats.calls, {});
});

t.test('acceptedKeys: only the keys listed pass; any other is refused 403 before the route', async (t) => {
  const gated = await startSandbox({ acceptedKeys: ['cfa-known-key-001'] });
  t.teardown(() => gated.close());
  const gatedHeaders = authHeaders(await fetchToken(gated));
  const known = await getJson(gated, '/v1/status', { ...gatedHeaders, 'x-api-key': 'cfa-known-key-001' });
  t.equal(known.status, 200);
  const invented = await getJson(gated, '/v1/status', { ...gatedHeaders, 'x-api-key': 'cfa-invented-key-9' });
  t.equal(invented.status, 403);
  t.same(invented.body, { status: 'error', message: 'clé API refusée' });
  t.equal(
    gated.received.filter((r) => r.headers['x-api-key'] === 'cfa-invented-key-9').length,
    1,
    'the refused call is recorded like any other',
  );
});
