/** The common API family of SPEC 4.16: routes under /v1 and /v2, errors `{status:'error', message}`. */
import { sendError } from './exchange.js';
import * as read from './read-routes.js';
import type { RouteHandler } from './route-context.js';
import type { Shape } from './shape.js';
import * as write from './write-routes.js';

export const UPSTREAM_ROUTES: Readonly<Record<string, RouteHandler>> = {
  'GET /v1/status': read.status,
  'GET /v2/dossiers': read.dossier,
  'GET /v2/dossiers/etats': read.dossierEtats,
  'GET /v1/dossiers/liste': read.dossierListe,
  'GET /v1/factures/etats': read.factureEtats,
  'GET /v1/cfakeyinfo': read.cfaKeyInfo,
  'POST /v1/dossiers': write.createDossier,
  'POST /v1/factures': write.createFacture,
  'POST /v1/conventions': write.createConvention,
  'POST /v2/certificats': write.createCertificat,
  'POST /v1/documents': write.createDocument,
};

export const COMMON_SHAPE: Shape = {
  name: 'common',
  routes: UPSTREAM_ROUTES,
  error: sendError,
  messages: {
    badToken: 'invalid token',
    badGatewayKey: (header) => `missing or invalid ${header}`,
    missingApiKey: 'clé API manquante',
    refusedApiKey: 'clé API refusée',
    methodNotAllowed: 'méthode non autorisée',
    unknownRoute: 'ressource inconnue',
    bodyTooLarge: 'corps trop volumineux',
    internal: (detail) => `erreur interne du bac à sable : ${detail}`,
  },
  faultBody: { status: 'error', message: 'injected' },
};
