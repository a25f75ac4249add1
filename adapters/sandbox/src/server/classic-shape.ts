/**
 * The classic API family: an older REST API that OPCOs still run. Routes under /api/v3,
 * snake_case names (snake-case.ts), `DD/MM/YYYY` dates (french-dates.ts), its own state words
 * (classic-states.ts), pages from 0, "not found" as a 400, errors `{erreur}` in French, and no
 * certificats route.
 */
import * as read from './classic-read-routes.js';
import * as write from './classic-write-routes.js';
import { sendClassicError } from './exchange.js';
import type { RouteHandler } from './route-context.js';
import type { Shape } from './shape.js';

export const CLASSIC_ROUTES: Readonly<Record<string, RouteHandler>> = {
  'GET /api/v3/statut': read.statut,
  'GET /api/v3/dossier': read.dossier,
  'GET /api/v3/dossiers/etats': read.dossierEtats,
  'GET /api/v3/dossiers': read.dossiers,
  'GET /api/v3/factures/etats': read.factureEtats,
  'GET /api/v3/cle-cfa': read.cleCfa,
  'POST /api/v3/dossiers': write.createDossier,
  'POST /api/v3/factures': write.createFacture,
  'POST /api/v3/conventions': write.createConvention,
  'POST /api/v3/documents': write.createDocument,
};

export const CLASSIC_SHAPE: Shape = {
  name: 'classic',
  routes: CLASSIC_ROUTES,
  error: sendClassicError,
  messages: {
    badToken: 'Authentification requise : jeton absent, invalide ou expiré',
    badGatewayKey: (header) => `Authentification requise : en-tête ${header} absent ou invalide`,
    missingApiKey: 'Clé API manquante',
    refusedApiKey: 'Clé API refusée',
    methodNotAllowed: 'Méthode non autorisée',
    unknownRoute: 'Ressource inconnue',
    bodyTooLarge: 'Corps de requête trop volumineux',
    internal: (detail) => `Erreur interne du bac à sable : ${detail}`,
  },
  faultBody: { erreur: 'Erreur injectée' },
};
