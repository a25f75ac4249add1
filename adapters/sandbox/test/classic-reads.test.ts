import t from 'tap';
import { startSandbox } from '../src/server/index.js';
import { classicHeaders, fr } from './classic-client.js';
import { getJson } from './upstream-client.js';

// Bare arrays off: this file checks shapes and filters; the quirk has its own test below.
const sandbox = await startSandbox({ shape: 'classic', pageSize: 25, quirks: { bareArrays: false } });
t.teardown(() => sandbox.close());
const headers = await classicHeaders(sandbox);
const { dossiers, factures } = sandbox.dataset;
const DOSSIER_WORDS: Record<string, string> = {
  TRANSMIS: 'DEPOSE',
  EN_COURS_INSTRUCTION: 'EN_INSTRUCTION',
  ENGAGE: 'ACCEPTE',
  ANNULE: 'ANNULE',
  REFUSE: 'REJETE',
  RUPTURE: 'ROMPU',
  SOLDE: 'CLOTURE',
};
const FACTURE_WORDS: Record<string, string> = {
  TRANSMIS: 'RECUE',
  EN_COURS_REGLEMENT: 'EN_PAIEMENT',
  REGLE: 'PAYEE',
  BLOQUE: 'SUSPENDUE',
  REFUSE: 'REJETEE',
  ANNULE: 'ANNULEE',
  RELANCE: 'RELANCEE',
};
const UNKNOWN = { erreur: 'Dossier inconnu : aucun dossier ne correspond aux critères' };

t.test('GET /api/v3/statut', async (t) => {
  const r = await getJson(sandbox, '/api/v3/statut', headers);
  t.equal(r.status, 200);
  t.strictSame(r.body, { etat: 'OK', versions_supportees: ['3.0', '3.1'] });
  t.strictSame((await getJson(sandbox, '/api/v3/statut?version=3', headers)).body, {
    erreur: "Paramètres invalides : paramètre inconnu 'version'",
  });
});

t.test('GET /api/v3/dossier: snake_case names, French dates, classic state, no envelope', async (t) => {
  const d = dossiers[123];
  const r = await getJson(sandbox, `/api/v3/dossier?numero_interne=${d.numeroInterne}`, headers);
  t.equal(r.status, 200);
  t.strictSame(Object.keys(r.body), [
    'engagement',
    'etat',
    'numero_interne',
    'numero_externe',
    'numero_deca',
    'date_modification',
    'cerfa',
    'echeances',
    'details_facturation',
    'engagements_frais_annexe',
  ]);
  t.equal(r.body.etat, DOSSIER_WORDS[d.etat]);
  t.equal(r.body.date_modification, fr(d.dateModification));
  t.strictSame(r.body.cerfa, {
    employeur: { siret: d.cerfa.employeur.siret, denomination: d.cerfa.employeur.denomination },
    apprenti: {
      nom: d.cerfa.apprenti.nom,
      prenom: d.cerfa.apprenti.prenom,
      date_naissance: fr(d.cerfa.apprenti.dateNaissance),
    },
    contrat: {
      date_debut_contrat: fr(d.cerfa.contrat.dateDebutContrat),
      date_fin_contrat: fr(d.cerfa.contrat.dateFinContrat),
    },
    formation: { rncp: d.cerfa.formation.rncp, intitule_qualification: d.cerfa.formation.intituleQualification },
    organisme_formation: { siret: d.cerfa.organismeFormation.siret },
  });
  t.strictSame(r.body.echeances[0], {
    numero_echeance: 1,
    date_debut_echeance: fr(d.echeances[0].dateDebutEcheance),
    date_fin_echeance: fr(d.echeances[0].dateFinEcheance),
    montant: d.echeances[0].montant,
  });
  t.strictSame(r.body.details_facturation, {
    niveau_prise_en_charge: d.detailsFacturation['niveauPriseEnCharge'],
    montant_engage: d.engagement,
    frequence_facturation: 'SEMESTRIELLE',
  });
  t.equal(d.cerfa.apprenti.dateNaissance.length, 10, 'the dataset keeps ISO dates');
});

t.test('GET /api/v3/dossier: every state word', async (t) => {
  for (const [etat, word] of Object.entries(DOSSIER_WORDS)) {
    const d = dossiers.find((x) => x.etat === etat)!;
    const r = await getJson(sandbox, `/api/v3/dossier?numero_interne=${d.numeroInterne}`, headers);
    t.equal(r.body.etat, word, `${etat} is written ${word}`);
  }
});

t.test('GET /api/v3/dossier by numero_externe and numero_deca; unknown is a 400', async (t) => {
  const d = dossiers[7];
  const r = await getJson(
    sandbox,
    `/api/v3/dossier?numero_externe=${d.numeroExterne}&numero_deca=${d.numeroDeca}`,
    headers,
  );
  t.equal(r.body.numero_interne, d.numeroInterne);
  t.equal(
    (await getJson(sandbox, `/api/v3/dossier?numero_externe=${d.numeroExterne}`, headers)).body.numero_interne,
    d.numeroInterne,
    'numero_externe alone',
  );
  for (const q of ['numero_interne=DOS-1999-999999', `numero_externe=${d.numeroExterne}&numero_deca=00000000000000`]) {
    const unknown = await getJson(sandbox, `/api/v3/dossier?${q}`, headers);
    t.equal(unknown.status, 400, `${q}: not found is a 400`);
    t.strictSame(unknown.body, UNKNOWN);
  }
  for (const q of [
    '',
    '?numero_deca=1',
    `?numero_interne=${d.numeroInterne}&numero_externe=x`,
    '?numero_interne=',
    `?numeroInterne=${d.numeroInterne}`,
  ]) {
    const bad = await getJson(sandbox, `/api/v3/dossier${q}`, headers);
    t.equal(bad.status, 400, `query "${q}" is refused`);
    t.match(bad.body.erreur, /^Paramètres invalides : /);
    t.strictSame(Object.keys(bad.body), ['erreur']);
  }
  t.same((await getJson(sandbox, `/api/v3/dossier?numeroInterne=${d.numeroInterne}`, headers)).body, {
    erreur: "Paramètres invalides : paramètre inconnu 'numeroInterne'",
  });
});

t.test('GET /api/v3/dossiers/etats: pages from 0', async (t) => {
  const first = await getJson(sandbox, '/api/v3/dossiers/etats?page=0', headers);
  t.equal(first.status, 200);
  t.strictSame(Object.keys(first.body), ['items', 'totalElements', 'page', 'size']);
  t.match(first.body, { totalElements: 300, page: 0, size: 25 });
  t.strictSame(first.body.items[0], {
    numero_externe: dossiers[0].numeroExterne,
    numero_deca: dossiers[0].numeroDeca,
    numero_interne: dossiers[0].numeroInterne,
    etat: DOSSIER_WORDS[dossiers[0].etat],
  });
  const items: { numero_interne: string; etat: string }[] = [];
  for (let page = 0; page < 12; page++) {
    const r = await getJson(sandbox, `/api/v3/dossiers/etats?page=${page}`, headers);
    t.equal(r.body.page, page);
    items.push(...r.body.items);
  }
  t.same(
    items.map((i) => i.numero_interne),
    dossiers.map((d) => d.numeroInterne),
    'pages 0..11 cover the dataset once, in order',
  );
  t.same(
    [...new Set(items.map((i) => i.etat))].sort(),
    Object.values(DOSSIER_WORDS).sort(),
    'only classic words on the wire',
  );
  const beyond = await getJson(sandbox, '/api/v3/dossiers/etats?page=12', headers);
  t.same(beyond.body, { items: [], totalElements: 300, page: 12, size: 25 });
  const noPage = await getJson(sandbox, '/api/v3/dossiers/etats', headers);
  t.equal(noPage.body.page, 0, 'no page (quirk off): page 0');
});

t.test('GET /api/v3/dossiers/etats: year and DD/MM/YYYY modification date', async (t) => {
  const year = await getJson(sandbox, '/api/v3/dossiers/etats?annee=2021&page=0', headers);
  t.equal(year.body.totalElements, dossiers.filter((d) => d.anneeDossier === 2021).length);
  const recent = dossiers.filter((d) => d.dateModification >= '2025-06-01');
  const since = await getJson(sandbox, '/api/v3/dossiers/etats?date_modification=01/06/2025', headers);
  t.ok(recent.length > 0 && recent.length < 300);
  t.equal(since.body.totalElements, recent.length);
  for (const q of [
    'date_modification=2025-06-01',
    'date_modification=31/02/2025',
    'annee=21',
    'page=-1',
    'page=x',
    'numeroPage=1',
    'anneeDossier=2021',
  ]) {
    const r = await getJson(sandbox, `/api/v3/dossiers/etats?${q}`, headers);
    t.equal(r.status, 400, `${q} is refused`);
    t.match(r.body.erreur, /^Paramètres invalides : /);
  }
});

t.test('bare-array quirk applies to classic etats too (no page: every item, no envelope)', async (t) => {
  sandbox.quirks.bareArrays = true;
  t.teardown(() => {
    sandbox.quirks.bareArrays = false;
  });
  const bare = await getJson(sandbox, '/api/v3/dossiers/etats?annee=2019', headers);
  t.ok(Array.isArray(bare.body));
  t.equal(bare.body.length, dossiers.filter((d) => d.anneeDossier === 2019).length);
  const paged = await getJson(sandbox, '/api/v3/dossiers/etats?page=0', headers);
  t.equal(paged.body.page, 0, 'an explicit page still gets the page object');
});

t.test('state typos never reach the classic wire', async (t) => {
  sandbox.quirks.stateTypos = true;
  const d = dossiers.find((x) => x.etat === 'RUPTURE')!;
  t.equal((await getJson(sandbox, `/api/v3/dossier?numero_interne=${d.numeroInterne}`, headers)).body.etat, 'ROMPU');
});

t.test('GET /api/v3/dossiers?numeros= (at most 20)', async (t) => {
  const wanted = [dossiers[3].numeroInterne, 'DOS-0000-000000', dossiers[200].numeroInterne];
  const r = await getJson(sandbox, `/api/v3/dossiers?numeros=${wanted.join(',')}`, headers);
  t.equal(r.status, 200);
  t.strictSame(Object.keys(r.body), ['dossiers', 'introuvables']);
  t.same(
    r.body.dossiers.map((d: { numero_interne: string }) => d.numero_interne),
    [wanted[0], wanted[2]],
  );
  t.equal(r.body.dossiers[1].cerfa.apprenti.date_naissance, fr(dossiers[200].cerfa.apprenti.dateNaissance));
  t.same(r.body.introuvables, ['DOS-0000-000000']);
  const twenty = dossiers
    .slice(0, 20)
    .map((d) => d.numeroInterne)
    .join(',');
  t.equal((await getJson(sandbox, `/api/v3/dossiers?numeros=${twenty}`, headers)).body.dossiers.length, 20);
  const tooMany = dossiers
    .slice(0, 21)
    .map((d) => d.numeroInterne)
    .join(',');
  const refused = await getJson(sandbox, `/api/v3/dossiers?numeros=${tooMany}`, headers);
  t.equal(refused.status, 400);
  t.match(refused.body.erreur, /20 numéros maximum/);
  t.equal((await getJson(sandbox, '/api/v3/dossiers', headers)).status, 400);
});

t.test('GET /api/v3/factures/etats: snake_case items, invoice words, 0-based pages, filters', async (t) => {
  const r = await getJson(sandbox, '/api/v3/factures/etats?page=0', headers);
  t.match(r.body, { totalElements: 120, page: 0, size: 25 });
  const paid = factures.find((x) => x.etatFacture === 'REGLE')!;
  const one = await getJson(sandbox, `/api/v3/factures/etats?reference_virement=${paid.referenceVirement}`, headers);
  t.strictSame(one.body.items, [
    {
      numero_interne_facture: paid.numeroInterneFacture,
      reference_facture_cfa: paid.referenceFactureCFA,
      organisme_formation: { siret: paid.organismeFormation.siret, iban: paid.organismeFormation.IBAN },
      montant_facture: paid.montantFacture,
      etat_facture: 'PAYEE',
      reference_virement: paid.referenceVirement,
      date_reglement: fr(paid.dateReglement!),
      commentaire: null,
      dossiers: paid.dossiers.map((l) => ({
        numero_interne_dossier: l.numeroInterneDossier,
        numero_externe_dossier: l.numeroExterneDossier,
        montant: l.montant,
      })),
    },
  ]);
  const last = await getJson(sandbox, '/api/v3/factures/etats?page=4', headers);
  t.equal(last.body.items.length, 20);
  t.equal(last.body.items.at(-1).numero_interne_facture, factures[119].numeroInterneFacture);
  const all = (
    await Promise.all([0, 1, 2, 3, 4].map((p) => getJson(sandbox, `/api/v3/factures/etats?page=${p}`, headers)))
  ).flatMap((x) => x.body.items);
  t.same(new Set(all.map((f: { etat_facture: string }) => f.etat_facture)), new Set(Object.values(FACTURE_WORDS)));
  for (const f of all)
    t.equal(
      f.etat_facture,
      FACTURE_WORDS[factures.find((x) => x.numeroInterneFacture === f.numero_interne_facture)!.etatFacture],
    );

  const line = factures[10].dossiers[0];
  const byDossier = await getJson(
    sandbox,
    `/api/v3/factures/etats?numero_interne_dossier=${line.numeroInterneDossier}`,
    headers,
  );
  t.equal(
    byDossier.body.totalElements,
    factures.filter((x) => x.dossiers.some((l) => l.numeroInterneDossier === line.numeroInterneDossier)).length,
  );
  const year = factures[10].anneeFacture;
  t.equal(
    (await getJson(sandbox, `/api/v3/factures/etats?annee=${year}`, headers)).body.totalElements,
    factures.filter((x) => x.anneeFacture === year).length,
  );
  t.equal(
    (
      await getJson(
        sandbox,
        `/api/v3/factures/etats?reference_facture_cfa=${factures[10].referenceFactureCFA}`,
        headers,
      )
    ).body.items[0].numero_interne_facture,
    factures[10].numeroInterneFacture,
  );
  const since = await getJson(sandbox, '/api/v3/factures/etats?date_modification=01/01/2024', headers);
  t.equal(since.body.totalElements, factures.filter((x) => x.dateModification >= '2024-01-01').length);
  t.equal((await getJson(sandbox, '/api/v3/factures/etats?dateModification=2024-01-01', headers)).status, 400);
  t.equal((await getJson(sandbox, '/api/v3/factures/etats?date_modification=2024-01-01', headers)).status, 400);
});

t.test('GET /api/v3/cle-cfa', async (t) => {
  const ok = await getJson(sandbox, '/api/v3/cle-cfa?siren=123456789&cle=abc', headers);
  t.equal(ok.status, 200);
  t.strictSame(ok.body, { statut: 'valide', date_fin_validite: '31/12/2027', commentaire: null });
  const revoked = await getJson(sandbox, '/api/v3/cle-cfa?siren=123456789&cle=forbidden-key-000', headers);
  t.strictSame(revoked.body, {
    statut: 'invalide',
    date_fin_validite: null,
    commentaire: 'Clé inconnue ou révoquée pour ce SIREN',
  });
  for (const q of ['siren=123456789', 'cle=abc', 'siren=12345678901234&cle=abc', 'siren=123456789&XAPIKEY=abc']) {
    t.equal((await getJson(sandbox, `/api/v3/cle-cfa?${q}`, headers)).status, 400, `${q} is refused`);
  }
});

t.test('no certificats route, no common routes; errors are {erreur}', async (t) => {
  for (const path of ['/api/v3/certificats', '/v2/dossiers/etats', '/v1/status']) {
    const r = await getJson(sandbox, path, headers);
    t.equal(r.status, 404, path);
    t.strictSame(r.body, { erreur: 'Ressource inconnue' });
  }
  const post = await fetch(`${sandbox.url}/api/v3/certificats`, { method: 'POST', headers, body: new FormData() });
  t.equal(post.status, 404);
  const wrong = await fetch(`${sandbox.url}/api/v3/statut`, { method: 'DELETE', headers });
  t.equal(wrong.status, 405);
  t.equal(wrong.headers.get('allow'), 'GET');
  t.equal((await getJson(sandbox, '/api/v3/statut', { authorization: headers.authorization })).status, 403);
  t.same((await getJson(sandbox, '/api/v3/statut', { ...headers, 'x-api-key': 'forbidden-key-000' })).body, {
    erreur: 'Clé API refusée',
  });
});
