/**
 * The classic profile through its own transform lists: each test feeds a route's request or
 * response list a value and asserts the exact value the pipeline would send upstream (step 5) or
 * return to the client (step 7). The recorded answers are checked by conformance.test.ts.
 */
import t from 'tap';
import { applyTransforms, type RouteKey, type RouteProfile } from '@opco-proxy/core';
import adapter, { profile } from '../src/index.js';

function route(key: RouteKey): RouteProfile {
  const found = profile.routes[key];
  if (!found) throw new Error(`route ${key} missing from the profile`);
  return found;
}
const request = (key: RouteKey, value: unknown) => applyTransforms(value, route(key).request);
const response = (key: RouteKey, value: unknown) => applyTransforms(value, route(key).response);

t.test('identity, limits, authentication and exports', async (t) => {
  t.equal(profile.id, 'classic-api');
  t.strictSame(profile.rateLimit, { limit: 30, windowMs: 60_000 });
  t.strictSame(profile.sync, { batchSize: 20 }, 'the upstream liste takes 20 numbers');
  t.strictSame(profile.polling, { intervalMs: 600_000 });
  t.equal(profile.auth?.kind, 'oauth-client-credentials');
  t.equal(adapter.profile, profile);
});

t.test('routes, upstream paths, parts and cache lifetimes; no certificats', async (t) => {
  const table = Object.fromEntries(
    Object.entries(profile.routes).map(([key, r]) => [key, [r.upstream, r.cacheTtlS, r.multipart]]),
  );
  t.strictSame(table, {
    'GET /status': ['/api/v3/statut', undefined, undefined],
    'GET /cfakeyinfo': ['/api/v3/cle-cfa', 3600, undefined],
    'GET /dossiers': ['/api/v3/dossier', 900, undefined],
    'GET /dossiers/etats': ['/api/v3/dossiers/etats', 120, undefined],
    'GET /dossiers/liste': ['/api/v3/dossiers', 900, undefined],
    'GET /factures/etats': ['/api/v3/factures/etats', 300, undefined],
    'POST /dossiers': ['/api/v3/dossiers', undefined, undefined],
    'POST /factures': ['/api/v3/factures', undefined, 'metadata'],
    'POST /conventions': ['/api/v3/conventions', undefined, 'metadata'],
    'POST /documents': ['/api/v3/documents', undefined, 'metadata'],
  });
});

t.test('queries: renamed, dates as DD/MM/YYYY, pages counted from 0', async (t) => {
  t.strictSame(
    request('GET /dossiers/etats', { anneeDossier: '2025', dateModification: '2025-06-01', numeroPage: '3' }),
    { annee: '2025', date_modification: '01/06/2025', page: '2' },
  );
  t.strictSame(request('GET /dossiers/etats', {}), {}, 'no page asked, none sent');
  t.strictSame(
    request('GET /factures/etats', {
      anneeFacture: '2024',
      referenceFactureCFA: 'F-1',
      numeroInterneDossier: 'D-1',
      numeroPage: '1',
    }),
    {
      annee: '2024',
      reference_facture_cfa: 'F-1',
      numero_interne_dossier: 'D-1',
      page: '0',
    },
  );
  t.strictSame(request('GET /dossiers', { numeroExterne: 'E', numeroDeca: 'D' }), {
    numero_externe: 'E',
    numero_deca: 'D',
  });
  t.strictSame(request('GET /dossiers/liste', { numerosInternes: 'A,B' }), { numeros: 'A,B' });
  t.strictSame(request('GET /cfakeyinfo', { siren: '123456789', XAPIKEY: 'k' }), { siren: '123456789', cle: 'k' });
});

t.test('a dossier goes up in snake_case with DD/MM/YYYY dates, its answer comes back in the SPEC words', async (t) => {
  const body = {
    numeroExterne: 'X',
    cerfa: {
      apprenti: { nom: 'Dupont', dateNaissance: '2006-04-02T00:00:00.000Z' },
      organismeFormation: { uaiCfa: 'U' },
      contrat: { dateDebutContrat: '2025-09-01' },
    },
  };
  t.strictSame(request('POST /dossiers', body), {
    numero_externe: 'X',
    cerfa: {
      apprenti: { nom: 'Dupont', date_naissance: '02/04/2006' },
      organisme_formation: { uai_cfa: 'U' },
      contrat: { date_debut_contrat: '01/09/2025' },
    },
  });
  t.strictSame(response('POST /dossiers', { numero_interne: 'DOS-1', numero_externe: 'X', etat: 'DEPOSE' }), {
    numeroInterne: 'DOS-1',
    numeroExterne: 'X',
    etat: 'TRANSMIS',
  });
  t.strictSame(response('POST /factures', { numero_interne_facture: 'FAC-1', etat_facture: 'RECUE' }), {
    numeroInterneFacture: 'FAC-1',
    etatFacture: 'TRANSMIS',
  });
});

t.test('a 0-based page becomes the page object of SPEC 2.2; a bare array too', async (t) => {
  const items = [
    { numero_interne: 'DOS-1', numero_externe: 'E-1', numero_deca: 'D-1', etat: 'ACCEPTE' },
    { numero_interne: 'DOS-2', numero_externe: 'E-2', numero_deca: 'D-2', etat: 'ROMPU' },
  ];
  const expected = [
    { numeroInterne: 'DOS-1', numeroExterne: 'E-1', numeroDeca: 'D-1', etat: 'ENGAGE' },
    { numeroInterne: 'DOS-2', numeroExterne: 'E-2', numeroDeca: 'D-2', etat: 'RUPTURE' },
  ];
  t.strictSame(response('GET /dossiers/etats', { items, totalElements: 42, page: 1, size: 2 }), {
    status: 'success',
    total: 42,
    count: 2,
    page: 2,
    EtatDossierResult: expected,
  });
  t.strictSame(response('GET /dossiers/etats', items), {
    status: 'success',
    total: 2,
    count: 2,
    page: 1,
    EtatDossierResult: expected,
  });
});

t.test('a key check in the words of SPEC 4.4', async (t) => {
  t.strictSame(response('GET /cfakeyinfo', { statut: 'valide', date_fin_validite: '31/12/2027', commentaire: null }), {
    status: 'success',
    dateFinValidite: '2027-12-31',
  });
  t.strictSame(
    response('GET /cfakeyinfo', { statut: 'invalide', date_fin_validite: null, commentaire: 'Clé inconnue' }),
    { status: 'error', comment: 'Clé inconnue' },
  );
});

t.test('error rules: 400 "Dossier inconnu" of GET /dossiers is NOT_FOUND, nothing else', async (t) => {
  const [notFound, tooMany] = profile.errors!;
  t.match(notFound, { status: 400, routes: ['GET /dossiers'], code: 'NOT_FOUND' });
  t.ok(notFound.body!.test('Dossier inconnu : aucun dossier ne correspond aux critères'));
  t.notOk(notFound.body!.test('Paramètres invalides : numero_interne'));
  t.match(tooMany, { status: 400, routes: ['GET /dossiers/liste'], code: 'VALIDATION_ERROR' });
});
