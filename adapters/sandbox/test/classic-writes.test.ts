import t from 'tap';
import { startSandbox } from '../src/server/index.js';
import { classicHeaders, fr } from './classic-client.js';
import { getJson, postForm, postJson } from './upstream-client.js';

const sandbox = await startSandbox({ shape: 'classic', dossierCount: 60, factureCount: 20 });
t.teardown(() => sandbox.close());
const headers = await classicHeaders(sandbox);
const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 255, 254, 10])]);
const today = new Date().toISOString().slice(0, 10);

const cerfa = {
  employeur: { siret: '73282932000074', denomination: 'BOULANGERIE TEST' },
  apprenti: { nom: 'DURAND', prenom: 'LÉA', date_naissance: '02/04/2006' },
  contrat: { date_debut_contrat: '01/09/2026', date_fin_contrat: '31/08/2028', duree_travail_hebdo_heures: '35' },
  formation: { rncp: 'RNCP37859', intitule_qualification: 'CAP Boulanger' },
  organisme_formation: { siret: '13002526500013', uai_cfa: '0751234A' },
  couts: { cout_total_pedagogie_cfa: 12000, montant_rqth_annee1: 0 },
};

t.test('POST /api/v3/dossiers: snake_case body, French dates, stored canonical, read back classic', async (t) => {
  sandbox.resetStats();
  const created = await postJson(sandbox, '/api/v3/dossiers', headers, {
    cerfa,
    numero_externe: 'CFA-REF-42',
    numero_deca: '07520260900001',
  });
  t.equal(created.status, 201);
  t.strictSame(created.body, { numero_interne: 'DOS-NEW-000001', numero_externe: 'CFA-REF-42', etat: 'DEPOSE' });
  t.same(
    sandbox.received[0].json,
    { cerfa, numero_externe: 'CFA-REF-42', numero_deca: '07520260900001' },
    'received shows the wire body',
  );

  const stored = sandbox.dataset.dossier('DOS-NEW-000001')!;
  t.same(
    stored.cerfa,
    {
      employeur: { siret: '73282932000074', denomination: 'BOULANGERIE TEST' },
      apprenti: { nom: 'DURAND', prenom: 'LÉA', dateNaissance: '2006-04-02' },
      contrat: { dateDebutContrat: '2026-09-01', dateFinContrat: '2028-08-31', dureeTravailHebdoHeures: '35' },
      formation: { rncp: 'RNCP37859', intituleQualification: 'CAP Boulanger' },
      organismeFormation: { siret: '13002526500013', uaiCfa: '0751234A' },
      couts: { coutTotalPedagogieCFA: 12000, montantRQTHAnnee1: 0 },
    },
    'the dataset keeps SPEC names and ISO dates',
  );
  t.equal(stored.etat, 'TRANSMIS');
  t.equal(stored.anneeDossier, 2026);

  const read = await getJson(sandbox, '/api/v3/dossier?numero_interne=DOS-NEW-000001', headers);
  t.same(read.body.cerfa, cerfa, 'read back exactly as sent');
  t.equal(read.body.etat, 'DEPOSE');
  t.equal(read.body.date_modification, fr(today));
  const byExterne = await getJson(
    sandbox,
    '/api/v3/dossier?numero_externe=CFA-REF-42&numero_deca=07520260900001',
    headers,
  );
  t.equal(byExterne.body.numero_interne, 'DOS-NEW-000001');
  const etats = await getJson(sandbox, `/api/v3/dossiers/etats?date_modification=${fr(today)}&page=0`, headers);
  t.same(etats.body.items, [
    { numero_externe: 'CFA-REF-42', numero_deca: '07520260900001', numero_interne: 'DOS-NEW-000001', etat: 'DEPOSE' },
  ]);
});

t.test('POST /api/v3/dossiers refusals: 400 with a French message', async (t) => {
  const cases: [unknown, string][] = [
    [{ numero_externe: 'X' }, 'Paramètres invalides : cerfa obligatoire'],
    [
      { cerfa: { ...cerfa, apprenti: { ...cerfa.apprenti, date_naissance: '2006-04-02' } } },
      "Date invalide : le champ 'cerfa.apprenti.date_naissance' doit être au format JJ/MM/AAAA",
    ],
    [
      { cerfa: { ...cerfa, contrat: { ...cerfa.contrat, date_fin_contrat: '31/02/2028' } } },
      "Date invalide : le champ 'cerfa.contrat.date_fin_contrat' doit être au format JJ/MM/AAAA",
    ],
    [
      { cerfa: { ...cerfa, contrat: { date_debut_contrat: 20260901 } } },
      "Date invalide : le champ 'cerfa.contrat.date_debut_contrat' doit être au format JJ/MM/AAAA",
    ],
    [
      { cerfa: { apprenti: { nom: 'X', dateNaissance: '02/04/2006' } } },
      "Paramètres invalides : champ 'cerfa.apprenti.dateNaissance' inconnu, les noms de champs sont en snake_case",
    ],
    [
      { numeroExterne: 'X', cerfa },
      "Paramètres invalides : champ 'numeroExterne' inconnu, les noms de champs sont en snake_case",
    ],
    [[cerfa], 'Paramètres invalides : objet JSON attendu'],
  ];
  const before = sandbox.dataset.dossiers.length;
  for (const [body, erreur] of cases) {
    const r = await postJson(sandbox, '/api/v3/dossiers', headers, body);
    t.equal(r.status, 400, erreur);
    t.strictSame(r.body, { erreur });
  }
  const nullDate = await postJson(sandbox, '/api/v3/dossiers', headers, {
    cerfa: { ...cerfa, contrat: { ...cerfa.contrat, date_rupture: null } },
  });
  t.equal(nullDate.status, 201, 'a null date is no date');
  t.equal(sandbox.dataset.dossiers.length, before + 1, 'nothing created by the refused ones');
  const broken = await fetch(`${sandbox.url}/api/v3/dossiers`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"cerfa":',
  });
  t.equal(broken.status, 400);
  t.match(((await broken.json()) as { erreur: string }).erreur, /^Paramètres invalides : corps JSON invalide/);
  const noBody = await fetch(`${sandbox.url}/api/v3/dossiers`, { method: 'POST', headers });
  t.equal(noBody.status, 400);
});

t.test('POST /api/v3/factures: metadata part, snake_case, dates; shows in factures/etats', async (t) => {
  sandbox.resetStats();
  const dossier = sandbox.dataset.dossiers[10];
  const meta = {
    montant_total: 1234.5,
    numero: 'FCFA-TEST-1',
    date_emission: '15/03/2026',
    iban_emetteur: 'FR7630004000031234567890143',
    siret_emetteur: '13002526500013',
    est_certificat_realisation: false,
    lignes: [
      { montant: 1000, nature_ligne: 'PEDAGOGIE', numero_dossier: dossier.numeroInterne },
      { montant: 234.5, nature_ligne: 'RESTAURATION', numero_dossier: dossier.numeroInterne },
    ],
  };
  const form = new FormData();
  form.append('metadata', JSON.stringify(meta));
  form.append('fichier', new Blob([pdf], { type: 'application/pdf' }), 'facture.pdf');
  const r = await postForm(sandbox, '/api/v3/factures', headers, form);
  t.equal(r.status, 201);
  t.strictSame(r.body, { numero_interne_facture: 'FAC-NEW-000001', etat_facture: 'RECUE' });
  const got = sandbox.received[0];
  t.same(
    got.parts!.map((p) => p.name),
    ['metadata', 'fichier'],
  );
  t.same(JSON.parse(got.parts![0].content.toString('utf8')), meta, 'received shows the wire metadata');
  t.ok(got.parts![1].content.equals(pdf));

  const stored = sandbox.dataset.facture('FAC-NEW-000001')!;
  t.match(stored, {
    referenceFactureCFA: 'FCFA-TEST-1',
    dateEmission: '2026-03-15',
    anneeFacture: 2026,
    montantFacture: 1234.5,
    etatFacture: 'TRANSMIS',
  });
  const listed = await getJson(sandbox, '/api/v3/factures/etats?reference_facture_cfa=FCFA-TEST-1', headers);
  t.strictSame(listed.body.items, [
    {
      numero_interne_facture: 'FAC-NEW-000001',
      reference_facture_cfa: 'FCFA-TEST-1',
      organisme_formation: { siret: '13002526500013', iban: 'FR7630004000031234567890143' },
      montant_facture: 1234.5,
      etat_facture: 'RECUE',
      reference_virement: null,
      date_reglement: null,
      commentaire: null,
      dossiers: [
        {
          numero_interne_dossier: dossier.numeroInterne,
          numero_externe_dossier: dossier.numeroExterne,
          montant: 1234.5,
        },
      ],
    },
  ]);
});

t.test('metadata as a JSON file part; conventions and documents', async (t) => {
  const convention = new FormData();
  convention.append(
    'metadata',
    new Blob(
      [JSON.stringify({ numero_interne_dossier: 'DOS-2021-000030', contrat: { date_debut_contrat: '01/09/2021' } })],
      { type: 'application/json' },
    ),
    'metadata.json',
  );
  convention.append('fichier', new Blob([pdf], { type: 'application/pdf' }), 'convention.pdf');
  const c = await postForm(sandbox, '/api/v3/conventions', headers, convention);
  t.equal(c.status, 201);
  t.match(c.body, { numero_convention: /^CONV-NEW-\d{6}$/, numero_interne_dossier: 'DOS-2021-000030' });
  t.strictSame(Object.keys(c.body), ['numero_convention', 'numero_interne_dossier']);

  const document = new FormData();
  document.append(
    'metadata',
    JSON.stringify({ type_fichier: 'CERFA', objets: [{ type_objet: 'dossier', id_objet: 'DOS-NEW-000001' }] }),
  );
  document.append('fichier', new Blob([pdf], { type: 'application/pdf' }), 'cerfa.pdf');
  const d = await postForm(sandbox, '/api/v3/documents', headers, document);
  t.equal(d.status, 201);
  t.match(d.body, { id_document: /^DOC-NEW-\d{6}$/ });
});

t.test('multipart refusals', async (t) => {
  const common = new FormData();
  common.append('facture', JSON.stringify({ numero: 'x' }));
  const wrongName = await postForm(sandbox, '/api/v3/factures', headers, common);
  t.equal(wrongName.status, 400, 'the common part name is not the classic one');
  t.strictSame(wrongName.body, { erreur: "Paramètres invalides : partie 'metadata' manquante" });

  for (const content of ['type_fichier=CERFA', '[1,2]', '"text"']) {
    const notJson = new FormData();
    notJson.append('metadata', content);
    const r = await postForm(sandbox, '/api/v3/documents', headers, notJson);
    t.equal(r.status, 400, `metadata ${content}`);
    t.strictSame(r.body, { erreur: "Paramètres invalides : la partie 'metadata' doit contenir un objet JSON" });
  }
  const badDate = new FormData();
  badDate.append('metadata', JSON.stringify({ numero: 'x', date_emission: '2026-03-15', lignes: [] }));
  t.strictSame((await postForm(sandbox, '/api/v3/factures', headers, badDate)).body, {
    erreur: "Date invalide : le champ 'date_emission' doit être au format JJ/MM/AAAA",
  });
  const camel = new FormData();
  camel.append('metadata', JSON.stringify({ numero: 'x', lignes: [{ numeroDossier: 'D' }] }));
  t.strictSame((await postForm(sandbox, '/api/v3/factures', headers, camel)).body, {
    erreur: "Paramètres invalides : champ 'lignes[0].numeroDossier' inconnu, les noms de champs sont en snake_case",
  });
  const asJson = await postJson(sandbox, '/api/v3/conventions', headers, { numero_interne_dossier: 'x' });
  t.strictSame(asJson.body, { erreur: 'Paramètres invalides : multipart/form-data attendu' });
  t.notOk(
    sandbox.dataset.factures.some((f) => f.referenceFactureCFA === 'x'),
    'nothing created',
  );
});

t.test('faults, received and stats work the same in the classic shape', async (t) => {
  sandbox.resetStats();
  t.teardown(() => sandbox.faults.clear());
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', status: 503, times: 1, headers: { 'retry-after': '1' } });
  const failed = await getJson(sandbox, '/api/v3/dossiers/etats?page=0', headers);
  t.equal(failed.status, 503);
  t.strictSame(failed.body, { erreur: 'Erreur injectée' }, "a fault without body answers in the shape's words");
  t.equal(failed.headers.get('retry-after'), '1');
  t.equal((await getJson(sandbox, '/api/v3/dossiers/etats?page=0', headers)).status, 200);
  t.same(sandbox.stats.calls, { 'GET /api/v3/dossiers/etats': 2 });
  t.match(sandbox.received[0], { method: 'GET', path: '/api/v3/dossiers/etats', query: { page: '0' } });

  sandbox.faults.add({ status: 500 });
  t.type((await classicHeaders(sandbox)).authorization, 'string', 'a catch-all fault leaves /auth/token alone');
  sandbox.faults.clear();
  sandbox.faults.add({ route: 'POST /auth/token', status: 503, times: 1 });
  await t.rejects(classicHeaders(sandbox), /503/, 'an exact fault hits the classic token route');
  t.equal(sandbox.stats.tokenRequests, 2);
});

t.test('advance() shows up with classic words and French dates', async (t) => {
  const moved = sandbox.advance({ dossiers: 3, factures: 2 });
  const etats = await getJson(sandbox, `/api/v3/dossiers/etats?date_modification=${fr(today)}&page=0`, headers);
  const movedItems = etats.body.items.filter((i: { numero_interne: string }) =>
    moved.dossiers.includes(i.numero_interne),
  );
  t.equal(movedItems.length, 3);
  const record = await getJson(sandbox, `/api/v3/dossier?numero_interne=${moved.dossiers[0]}`, headers);
  t.equal(record.body.date_modification, fr(today));
  t.match(record.body.etat, /^(DEPOSE|EN_INSTRUCTION|ACCEPTE|ANNULE|REJETE|ROMPU|CLOTURE)$/);
  const factures = await getJson(sandbox, `/api/v3/factures/etats?date_modification=${fr(today)}`, headers);
  const ids = factures.body.items.map((f: { numero_interne_facture: string }) => f.numero_interne_facture);
  for (const id of moved.factures) t.ok(ids.includes(id), `${id} listed as modified today`);
});
