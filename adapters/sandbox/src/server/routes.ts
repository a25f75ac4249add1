/** Upstream routing table and the gate every non-token route passes first (bearer, then API key). */
import { sendError } from './exchange.js';
import type { TokenIssuer } from './oauth.js';
import * as read from './read-routes.js';
import type { RouteContext, RouteHandler } from './route-context.js';
import * as write from './write-routes.js';

/** X-API-KEY value the sandbox refuses, to simulate an upstream that rejects a CFA's key. */
export const REFUSED_API_KEY = 'forbidden-key-000';

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

const KNOWN_PATHS = new Set(Object.keys(UPSTREAM_ROUTES).map((key) => key.slice(key.indexOf(' ') + 1)));

export function handleUpstream(context: RouteContext, path: string, issuer: TokenIssuer): void {
  const { req, res } = context;
  // Order of the real gateway: the token is checked before the key, so a request with neither is a 401.
  if (!issuer.authorizes(req)) {
    sendError(res, 401, 'invalid token', { 'www-authenticate': 'Bearer error="invalid_token"' });
    return;
  }
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    sendError(res, 403, 'clé API manquante');
    return;
  }
  if (apiKey === REFUSED_API_KEY) {
    sendError(res, 403, 'clé API refusée');
    return;
  }
  const handler = UPSTREAM_ROUTES[`${req.method} ${path}`];
  if (handler) {
    handler(context);
    return;
  }
  if (KNOWN_PATHS.has(path)) {
    const allowed = Object.keys(UPSTREAM_ROUTES).filter((k) => k.endsWith(` ${path}`)).map((k) => k.split(' ')[0]!);
    sendError(res, 405, 'méthode non autorisée', { allow: allowed.join(', ') });
    return;
  }
  sendError(res, 404, 'ressource inconnue');
}
