/**
 * The profile of SPEC 4.16, checked through its own transform lists: each test feeds a route's
 * request or response list a realistic value and asserts the exact value the pipeline would
 * send upstream (step 5) or return to the client (step 7).
 */
import t from 'tap';
import { ROUTE_KEYS, applyTransforms, type RouteKey, type RouteProfile } from '@opco-proxy/core';
import adapter, { profile } from '../src/index.js';

function route(key: RouteKey): RouteProfile {
  const found = profile.routes[key];
  if (!found) throw new Error(`route ${key} missing from the profile`);
  return found;
}
const request = (key: RouteKey, value: unknown) => applyTransforms(value, route(key).request);
const response = (key: RouteKey, value: unknown) => applyTransforms(value, route(key).response);

t.test('identity, limits and exports', async (t) => {
  t.equal(profile.id, 'common-api');
  t.strictSame(profile.rateLimit, { limit: 60, windowMs: 60_000 }, '60 requests per minute');
  t.strictSame(profile.sync, { batchSize: 50 });
  t.strictSame(profile.polling, { intervalMs: 300_000 });
  t.strictSame(profile.versions, ['v1', 'v2']);
  t.equal(adapter.profile, profile, 'default export is the adapter module');
});

t.test('routes, upstream paths, parts and cache lifetimes of the 4.16 table', async (t) => {
  const expected: Partial<Record<RouteKey, { upstream: string; cacheTtlS?: number; multipart?: string }>> = {
    'GET /status': { upstream: '/v1/status' },
    'GET /dossiers': { upstream: '/v2/dossiers', cacheTtlS: 600 },
    'GET /dossiers/etats': { upstream: '/v2/dossiers/etats', cacheTtlS: 300 },
    'GET /dossiers/liste': { upstream: '/v1/dossiers/liste', cacheTtlS: 600 },
    'POST /dossiers': { upstream: '/v1/dossiers' },
    'POST /factures': { upstream: '/v1/factures', multipart: 'facture' },
    'POST /conventions': { upstream: '/v1/conventions', multipart: 'convention' },
    'POST /certificats': { upstream: '/v2/certificats', multipart: 'certificat' },
    'POST /documents': { upstream: '/v1/documents', multipart: 'infosFichier' },
  };
  t.strictSame(Object.keys(profile.routes).sort(), Object.keys(expected).sort());
  for (const [key, want] of Object.entries(expected)) {
    const got = route(key as RouteKey);
    t.strictSame(
      { upstream: got.upstream, cacheTtlS: got.cacheTtlS, multipart: got.multipart },
      { upstream: want.upstream, cacheTtlS: want.cacheTtlS, multipart: want.multipart },
      key,
    );
  }
  for (const key of ROUTE_KEYS.filter((k) => k.startsWith('POST '))) {
    t.notOk(profile.routes[key]?.cacheTtlS, `${key} is never cached`);
  }
  t.notOk(route('GET /status').cacheTtlS, 'status is not cached');
  t.notOk(route('POST /dossiers').multipart, 'POST /dossiers is sent as JSON');
});

t.test('cfakeyinfo and factures/etats are absent (501 NOT_SUPPORTED)', async (t) => {
  t.notOk('GET /cfakeyinfo' in profile.routes);
  t.notOk('GET /factures/etats' in profile.routes);
});

t.test('pass-through routes carry no transform; a facture only gets its date written as a date (D31)', async (t) => {
  for (const key of ['GET /status', 'POST /documents'] as const) {
    t.notOk(route(key).request?.length, `${key} request`);
    t.notOk(route(key).response?.length, `${key} response`);
  }
  t.notOk(route('POST /factures').response?.length, 'POST /factures response');
  const facture = {
    numero: 'F-1',
    montantTotal: 1200,
    dateEmission: '2024-10-01',
    lignes: [{ montant: 1200, natureLigne: 'PEDAGOGIE', numeroDossier: ' x ' }],
    commentaire: null,
  };
  t.strictSame(request('POST /factures', facture), facture, 'nothing else changes');
  t.strictSame(
    request('POST /factures', { ...facture, dateEmission: '2024-10-01T09:00:00+02:00' }),
    facture,
    'a timestamp becomes its date',
  );
});

t.test('GET /dossiers: state corrected in a dossier record', async (t) => {
  const dossier = {
    status: 'success',
    engagement: 7500,
    etat: 'RUTPURE',
    cerfa: { apprenti: { nom: 'DUPONT', prenom: 'JEAN', dateNaissance: '2005-02-01' } },
    echeances: [{ numero: 1, etat: 'Valide' }],
  };
  t.strictSame(response('GET /dossiers', dossier), {
    ...dossier,
    etat: 'RUPTURE',
    echeances: [{ numero: 1, etat: 'ENGAGE' }],
  });
});

const etatsItems = [
  { numeroExterne: 'EXT-1', numeroDeca: 'DECA-1', numeroInterne: 'INT-1', etat: 'RUTPURE' },
  { numeroExterne: 'EXT-2', numeroDeca: 'DECA-2', numeroInterne: 'INT-2', etat: 'En cours' },
  { numeroExterne: 'EXT-3', numeroDeca: 'DECA-3', numeroInterne: 'INT-3', etat: 'Valide' },
  { numeroExterne: 'EXT-4', numeroDeca: 'DECA-4', numeroInterne: 'INT-4', etat: 'Refuse' },
  { numeroExterne: 'EXT-5', numeroDeca: 'DECA-5', numeroInterne: 'INT-5', etat: 'SOLDE' },
];
const correctedEtats = ['RUPTURE', 'EN_COURS_INSTRUCTION', 'ENGAGE', 'REFUSE', 'SOLDE'].map((etat, i) => ({
  ...etatsItems[i],
  etat,
}));

t.test('GET /dossiers/etats: the four corrections in a page', async (t) => {
  const page = { status: 'success', total: 5, count: 5, page: 2, EtatDossierResult: etatsItems };
  t.strictSame(response('GET /dossiers/etats', page), { ...page, EtatDossierResult: correctedEtats });
});

t.test('GET /dossiers/etats: a bare array is wrapped into the page object', async (t) => {
  t.strictSame(response('GET /dossiers/etats', etatsItems), {
    status: 'success',
    total: 5,
    count: 5,
    page: 1,
    EtatDossierResult: correctedEtats,
  });
  t.strictSame(response('GET /dossiers/etats', []), {
    status: 'success',
    total: 0,
    count: 0,
    page: 1,
    EtatDossierResult: [],
  });
});

t.test('GET /dossiers/liste: states corrected in every record', async (t) => {
  const liste = {
    status: 'success',
    dossiers: [
      { numeroInterne: 'INT-1', etat: 'RUTPURE', cerfa: {} },
      { numeroInterne: 'INT-2', etat: 'En cours', cerfa: {} },
      { numeroInterne: 'INT-3', etat: 'Valide', cerfa: {} },
      { numeroInterne: 'INT-4', etat: 'Refuse', cerfa: {} },
    ],
    numerosInternesIntrouvables: ['INT-9'],
  };
  t.strictSame(response('GET /dossiers/liste', liste), {
    status: 'success',
    dossiers: [
      { numeroInterne: 'INT-1', etat: 'RUPTURE', cerfa: {} },
      { numeroInterne: 'INT-2', etat: 'EN_COURS_INSTRUCTION', cerfa: {} },
      { numeroInterne: 'INT-3', etat: 'ENGAGE', cerfa: {} },
      { numeroInterne: 'INT-4', etat: 'REFUSE', cerfa: {} },
    ],
    numerosInternesIntrouvables: ['INT-9'],
  });
});

t.test('POST /dossiers: the request sent upstream', async (t) => {
  const body = {
    cerfa: {
      employeur: { siret: '12345678900011', denomination: '  Boulangerie du Port ', nom: ' martin', telephone: null },
      apprenti: { nom: ' dupont ', prenom: 'Élodie ', nomUsage: null, dateNaissance: '01/02/2005', sexe: 'F' },
      maitre1: { nom: 'Durand', dateNaissance: '1980-05-17T00:00:00.000Z' },
      contrat: {
        dateConclusion: '15/08/2024',
        dateDebutContrat: '2024-09-01T00:00:00+02:00',
        dateFinContrat: '31/08/2026',
        dateDebutFormationPratique: '2024-09-02',
        dateEffetAvenant: null,
        dureeTravailHebdoHeures: 35,
        dureeTravailHebdoMinutes: 0,
        salaireEmbauche: 1100.5,
      },
      formation: {
        rncp: 'RNCP12345',
        dateDebutFormation: '2024-09-01T22:00:00.000Z',
        dateFinFormation: '30/06/2026',
        dureeFormation: 800,
      },
      organismeFormation: { siret: '98765432100019', uaiCfa: null },
    },
  };
  t.strictSame(request('POST /dossiers', body), {
    cerfa: {
      employeur: { siret: '12345678900011', denomination: 'BOULANGERIE DU PORT', nom: 'MARTIN' },
      apprenti: { nom: 'DUPONT', prenom: 'ÉLODIE', dateNaissance: '2005-02-01', sexe: 'F' },
      maitre1: { nom: 'Durand', dateNaissance: '1980-05-17' },
      contrat: {
        dateConclusion: '2024-08-15',
        dateDebutContrat: '2024-09-01',
        dateFinContrat: '2026-08-31',
        dateDebutFormationPratique: '2024-09-02',
        dureeTravailHebdoHeures: '35',
        dureeTravailHebdoMinutes: '0',
        salaireEmbauche: 1100.5,
      },
      formation: {
        rncp: 'RNCP12345',
        dateDebutFormation: '2024-09-01',
        dateFinFormation: '2026-06-30',
        dureeFormation: 800,
      },
      organismeFormation: { siret: '98765432100019' },
    },
  });
});

t.test('POST /dossiers: an unparseable date is sent on for validation to report', async (t) => {
  const body = {
    cerfa: { apprenti: { nom: 'a', dateNaissance: '31/02/2005' }, contrat: { dureeTravailHebdoHeures: '35' } },
  };
  t.strictSame(request('POST /dossiers', body), {
    cerfa: { apprenti: { nom: 'A', dateNaissance: '31/02/2005' }, contrat: { dureeTravailHebdoHeures: '35' } },
  });
});

t.test('POST /dossiers: the upstream answer has its states corrected', async (t) => {
  t.strictSame(response('POST /dossiers', { status: 'success', numeroInterne: 'INT-7', etat: 'En cours' }), {
    status: 'success',
    numeroInterne: 'INT-7',
    etat: 'EN_COURS_INSTRUCTION',
  });
});

t.test('POST /conventions: apprentice names, contract dates, nulls', async (t) => {
  const body = {
    numeroInterneDossier: 'INT-1',
    employeur: { siret: '12345678900011' },
    apprenti: { nom: ' dupont', prenom: 'jean ', nomUsage: null },
    contrat: { dateDebutContrat: '01/09/2024', dateFinContrat: '2026-08-31T00:00:00.000Z' },
    organismeFormation: { siret: '98765432100019', uaiCfa: null },
    formation: { dateDebutFormation: '2024-09-02', dateFinFormation: '2026-06-30', dureeFormation: 800, rncp: null },
    couts: { coutTotalPedagogieCFA: 12000, montantRQTHAnnee1: null },
    mandatEmployeur: true,
  };
  t.strictSame(request('POST /conventions', body), {
    numeroInterneDossier: 'INT-1',
    employeur: { siret: '12345678900011' },
    apprenti: { nom: 'DUPONT', prenom: 'JEAN' },
    contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31' },
    organismeFormation: { siret: '98765432100019' },
    formation: { dateDebutFormation: '2024-09-02', dateFinFormation: '2026-06-30', dureeFormation: 800 },
    couts: { coutTotalPedagogieCFA: 12000 },
    mandatEmployeur: true,
  });
  t.notOk(route('POST /conventions').response?.length, 'no response transform');
});

t.test('POST /certificats: apprentice names, nulls', async (t) => {
  const body = {
    typeCertificat: 'Final',
    numeroInterneDossier: 'INT-1',
    numeroInterneFacture: null,
    representantLegal: null,
    employeur: { siret: '12345678900011' },
    apprenti: { nom: 'dupont ', prenom: ' jean', nomUsage: 'martin' },
    organismeFormation: { siret: '98765432100019' },
    echeance: { numero: 2, codification: null, dateDebut: '2025-09-01T00:00:00.000Z' },
  };
  t.strictSame(
    request('POST /certificats', body),
    {
      typeCertificat: 'Final',
      numeroInterneDossier: 'INT-1',
      employeur: { siret: '12345678900011' },
      apprenti: { nom: 'DUPONT', prenom: 'JEAN', nomUsage: 'MARTIN' },
      organismeFormation: { siret: '98765432100019' },
      echeance: { numero: 2, dateDebut: '2025-09-01' },
    },
    'dates of a certificat written as dates (D31)',
  );
  t.notOk(route('POST /certificats').response?.length, 'no response transform');
});

t.test('a request body is never mutated by the profile', async (t) => {
  const body = { cerfa: { apprenti: { nom: ' dupont ', nomUsage: null }, contrat: { dureeTravailHebdoHeures: 35 } } };
  const before = JSON.stringify(body);
  request('POST /dossiers', body);
  t.equal(JSON.stringify(body), before);
});
