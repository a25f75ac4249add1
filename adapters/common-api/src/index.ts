/**
 * The upstream profile of the first integrated OPCO body (SPEC 4.16): the example an integrator
 * copies to add another OPCO. It is data: routes, cache lifetimes, rate limit, and the named
 * transforms of `@opco-proxy/core` applied at declared paths.
 *
 * A route left out of `routes` answers 501 NOT_SUPPORTED: this body has no
 * `GET /cfakeyinfo` and no `GET /factures/etats`.
 */
import {
  type AdapterModule,
  correctStates,
  dateFormat,
  defineProfile,
  dropNulls,
  toString,
  trim,
  uppercase,
  wrapBareArray,
} from '@opco-proxy/core';

// --- POST /dossiers: the fields of the CERFA the upstream is strict about ------------------

/** Names the upstream wants upper-cased, without stray spaces (SPEC 4.16). */
const DOSSIER_NAMES = [
  'cerfa.apprenti.nom',
  'cerfa.apprenti.prenom',
  'cerfa.apprenti.nomUsage',
  'cerfa.employeur.nom',
  'cerfa.employeur.denomination',
];

/** Every date of the CERFA: contract, training and birth dates, sent as YYYY-MM-DD. */
const DOSSIER_DATES = [
  // contract
  'cerfa.contrat.dateConclusion',
  'cerfa.contrat.dateDebutContrat',
  'cerfa.contrat.dateFinContrat',
  'cerfa.contrat.dateEffetAvenant',
  'cerfa.contrat.dateDebutFormationPratique',
  'cerfa.contrat.dateRupture',
  // training
  'cerfa.formation.dateDebutFormation',
  'cerfa.formation.dateFinFormation',
  // birth: the apprentice and the apprenticeship masters of the CERFA
  'cerfa.apprenti.dateNaissance',
  'cerfa.maitre1.dateNaissance',
  'cerfa.maitre2.dateNaissance',
];

/** Weekly working time: the upstream rejects numbers there and wants strings. */
const DOSSIER_HEBDO_DURATIONS = ['cerfa.contrat.dureeTravailHebdoHeures', 'cerfa.contrat.dureeTravailHebdoMinutes'];

// --- POST /conventions and POST /certificats: the apprentice sits at the top level ---------

const APPRENTI_NAMES = ['apprenti.nom', 'apprenti.prenom', 'apprenti.nomUsage'];
const CONVENTION_DATES = ['contrat.dateDebutContrat', 'contrat.dateFinContrat'];
/**
 * Dates SPEC 4.16 lists no transform for, sent as the calendar date all the same: D31 lets
 * clients send timestamps in every body date field, and the upstream wants YYYY-MM-DD.
 */
const FACTURE_DATES = ['dateEmission'];
const CERTIFICAT_DATES = ['dateSignature', 'echeance.dateDebut', 'echeance.dateFin'];

export const profile = defineProfile({
  // The profile format it is written for (docs/adapters.md): a service that does not read it refuses it.
  formatVersion: 1,
  id: 'common-api',
  // The API versions this profile calls (its upstream paths are under /v1 and /v2); reported
  // by GET /{opcoId}/status when the upstream's own status answer does not say (D13).
  versions: ['v1', 'v2'],
  rateLimit: { limit: 60, windowMs: 60_000 },
  sync: { batchSize: 50 },
  polling: { intervalMs: 300_000 },
  // How the upstream says a CFA key is unknown (issue 37, P13): any other 403 (a dossier that is
  // not the CFA's) refuses that request, not the key.
  keyRefusal: { status: 403, body: /clé API (refusée|manquante)/ },
  routes: {
    'GET /status': { upstream: '/v1/status' },

    'GET /dossiers': {
      upstream: '/v2/dossiers',
      cacheTtlS: 600,
      response: [correctStates()],
    },
    'GET /dossiers/etats': {
      upstream: '/v2/dossiers/etats',
      cacheTtlS: 300,
      response: [correctStates(), wrapBareArray('EtatDossierResult')],
    },
    'GET /dossiers/liste': {
      upstream: '/v1/dossiers/liste',
      cacheTtlS: 600,
      response: [correctStates()],
    },

    'POST /dossiers': {
      upstream: '/v1/dossiers',
      request: [
        trim(DOSSIER_NAMES),
        uppercase(DOSSIER_NAMES),
        dateFormat(DOSSIER_DATES),
        toString(DOSSIER_HEBDO_DURATIONS),
        dropNulls(),
      ],
      response: [correctStates()],
    },
    'POST /factures': { upstream: '/v1/factures', multipart: 'facture', request: [dateFormat(FACTURE_DATES)] },
    'POST /conventions': {
      upstream: '/v1/conventions',
      multipart: 'convention',
      request: [trim(APPRENTI_NAMES), uppercase(APPRENTI_NAMES), dateFormat(CONVENTION_DATES), dropNulls()],
    },
    'POST /certificats': {
      upstream: '/v2/certificats',
      multipart: 'certificat',
      request: [trim(APPRENTI_NAMES), uppercase(APPRENTI_NAMES), dateFormat(CERTIFICAT_DATES), dropNulls()],
    },
    'POST /documents': { upstream: '/v1/documents', multipart: 'infosFichier' },
  },
});

const adapter: AdapterModule = { profile };
export default adapter;
