/**
 * The upstream profile of the classic OPCO API family: an older REST API whose every difference
 * from the common API (SPEC 4.16) is said here as data — its authentication, its paths under
 * /api/v3, snake_case names, `DD/MM/YYYY` dates, its own state words, pages counted from 0,
 * "dossier not found" answered as a 400, and no certificats route (501 NOT_SUPPORTED).
 *
 * Request lists run service -> upstream: dates and page numbers are converted while the fields
 * still bear the service's names, then the names are renamed. Response lists run the other way:
 * names first, then every other transform at the service's paths.
 */
import {
  type AdapterModule,
  dateFormat,
  defineProfile,
  dropNulls,
  mapValues,
  oauthClientCredentials,
  pageFrom,
  rename,
  renameKeys,
  renumber,
  setDefaults,
  wrapBareArray,
} from '@opco-proxy/core';
import {
  CERFA_DATES,
  DOSSIER_RECORD_DATES,
  DOSSIER_STATES,
  FACTURE_STATES,
  IRREGULAR_NAMES,
  KEY_STATUSES,
  within,
} from './vocabulary.js';

const UPSTREAM_DATES = { to: 'DD/MM/YYYY' } as const;
/** Service names -> the upstream's snake_case, at any depth. */
const toUpstreamNames = renameKeys('snake');
/** The upstream's snake_case -> the SPEC's names, acronyms restored. */
const toServiceNames = renameKeys('camel', { irregular: IRREGULAR_NAMES });

/** The service's `numeroPage` counts from 1, the upstream's `page` from 0. */
const zeroBasedPage = renumber(['numeroPage'], { from: 1, to: 0 });
const upstreamPage = (into: string) =>
  pageFrom({ items: 'items', total: 'totalElements', page: 'page', base: 0, into });

export const profile = defineProfile({
  // The profile format it is written for (docs/adapters.md): a service that does not read it refuses it.
  formatVersion: 1,
  id: 'classic-api',
  versions: ['3.0', '3.1'],
  // An older, smaller API: half the common API's budget, longer-lived answers.
  rateLimit: { limit: 30, windowMs: 60_000 },
  // Its liste route takes at most 20 numbers per call.
  sync: { batchSize: 20 },
  polling: { intervalMs: 600_000 },
  auth: oauthClientCredentials({ request: 'basic', tokenField: 'token', expiresInField: 'validity_seconds' }),
  errors: [
    // How this API says "not found": 400 with a French message.
    {
      status: 400,
      body: /Dossier inconnu/,
      routes: ['GET /dossiers'],
      code: 'NOT_FOUND',
      description: 'dossier not found at the upstream body',
    },
    // SPEC 8 lets a client ask for 50 numbers; this upstream takes 20: the client's request is what to change.
    {
      status: 400,
      body: /numéros maximum/,
      routes: ['GET /dossiers/liste'],
      code: 'VALIDATION_ERROR',
      description: 'numerosInternes: at most 20 internal numbers per call for this OPCO',
    },
  ],
  // How it says a CFA key is unknown (issue 37): any other 403 refuses one request, not the key.
  keyRefusal: { status: 403, body: /Clé API (refusée|manquante)/ },
  routes: {
    'GET /status': {
      upstream: '/api/v3/statut',
      response: [toServiceNames, rename({ versionsSupportees: 'versions' })],
    },
    'GET /cfakeyinfo': {
      upstream: '/api/v3/cle-cfa',
      cacheTtlS: 3600,
      request: [rename({ XAPIKEY: 'cle' })],
      response: [
        toServiceNames,
        rename({ statut: 'status', commentaire: 'comment' }),
        mapValues(['status'], KEY_STATUSES),
        dateFormat(['dateFinValidite']),
        // A refused key comes with `date_fin_validite: null`; SPEC 4.4 has no null date.
        dropNulls(),
      ],
    },
    'GET /dossiers': {
      upstream: '/api/v3/dossier',
      cacheTtlS: 900,
      request: [toUpstreamNames],
      response: [
        toServiceNames,
        setDefaults({ status: 'success' }),
        dateFormat(DOSSIER_RECORD_DATES),
        mapValues(['etat'], DOSSIER_STATES),
      ],
    },
    'GET /dossiers/etats': {
      upstream: '/api/v3/dossiers/etats',
      cacheTtlS: 120,
      request: [
        dateFormat(['dateModification'], UPSTREAM_DATES),
        zeroBasedPage,
        rename({ anneeDossier: 'annee', numeroPage: 'page' }),
        toUpstreamNames,
      ],
      response: [
        toServiceNames,
        upstreamPage('EtatDossierResult'),
        // Without `page` this upstream answers every item as a bare array.
        wrapBareArray('EtatDossierResult'),
        mapValues(['EtatDossierResult.*.etat'], DOSSIER_STATES),
      ],
    },
    'GET /dossiers/liste': {
      upstream: '/api/v3/dossiers',
      cacheTtlS: 900,
      request: [rename({ numerosInternes: 'numeros' })],
      response: [
        toServiceNames,
        rename({ introuvables: 'numerosInternesIntrouvables' }),
        setDefaults({ status: 'success', 'dossiers.*.status': 'success' }),
        dateFormat(within('dossiers.*', DOSSIER_RECORD_DATES)),
        mapValues(['dossiers.*.etat'], DOSSIER_STATES),
      ],
    },
    'GET /factures/etats': {
      upstream: '/api/v3/factures/etats',
      cacheTtlS: 300,
      request: [
        dateFormat(['dateModification'], UPSTREAM_DATES),
        zeroBasedPage,
        rename({ anneeFacture: 'annee', numeroPage: 'page' }),
        toUpstreamNames,
      ],
      response: [
        toServiceNames,
        upstreamPage('factures'),
        dateFormat(['factures.*.dateReglement']),
        mapValues(['factures.*.etatFacture'], FACTURE_STATES),
      ],
    },

    'POST /dossiers': {
      upstream: '/api/v3/dossiers',
      request: [dateFormat(CERFA_DATES, UPSTREAM_DATES), toUpstreamNames],
      response: [toServiceNames, mapValues(['etat'], DOSSIER_STATES)],
    },
    'POST /factures': {
      upstream: '/api/v3/factures',
      multipart: 'metadata',
      request: [dateFormat(['dateEmission'], UPSTREAM_DATES), toUpstreamNames],
      response: [toServiceNames, mapValues(['etatFacture'], FACTURE_STATES)],
    },
    'POST /conventions': {
      upstream: '/api/v3/conventions',
      multipart: 'metadata',
      request: [
        dateFormat(
          [
            'contrat.dateDebutContrat',
            'contrat.dateFinContrat',
            'formation.dateDebutFormation',
            'formation.dateFinFormation',
            'dateSignature',
          ],
          UPSTREAM_DATES,
        ),
        toUpstreamNames,
      ],
      response: [toServiceNames],
    },
    'POST /documents': {
      upstream: '/api/v3/documents',
      multipart: 'metadata',
      request: [toUpstreamNames],
      response: [toServiceNames],
    },
    // No 'POST /certificats': this API has no such route, so the service answers 501.
  },
});

const adapter: AdapterModule = { profile };
export default adapter;
