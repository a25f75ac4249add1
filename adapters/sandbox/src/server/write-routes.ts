/** POST routes of the simulated upstream: JSON dossier creation and the multipart uploads. */
import { sendError, sendJson } from './exchange.js';
import type { RouteContext, RouteHandler } from './route-context.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function createDossier({ res, received, bodyError, dataset }: RouteContext): void {
  if (bodyError) {
    sendError(res, 400, bodyError);
    return;
  }
  const body = received.json;
  if (!isObject(body) || !isObject(body['cerfa'])) {
    sendError(res, 422, 'cerfa: Required');
    return;
  }
  const dossier = dataset.createDossier({
    cerfa: body['cerfa'],
    numeroExterne: typeof body['numeroExterne'] === 'string' ? body['numeroExterne'] : undefined,
    numeroDeca: typeof body['numeroDeca'] === 'string' ? body['numeroDeca'] : undefined,
  });
  sendJson(res, 201, {
    status: 'success',
    numeroInterne: dossier.numeroInterne,
    numeroExterne: dossier.numeroExterne,
    comment: null,
  });
}

/**
 * Shared checks of the multipart routes: a multipart body holding a JSON object in the named
 * metadata part. Answers 400 and returns undefined when that is not so.
 */
function metadata(context: RouteContext, partName: string): Record<string, unknown> | undefined {
  const { res, received, bodyError } = context;
  if (bodyError) {
    sendError(res, 400, bodyError);
    return undefined;
  }
  if (!received.parts) {
    sendError(res, 400, 'multipart/form-data attendu');
    return undefined;
  }
  const part = received.parts.find((p) => p.name === partName);
  if (!part) {
    sendError(res, 400, `partie '${partName}' manquante`);
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(part.content.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) {
    sendError(res, 400, `partie '${partName}' : objet JSON attendu`);
    return undefined;
  }
  return parsed;
}

export const createFacture: RouteHandler = (context) => {
  const meta = metadata(context, 'facture');
  if (!meta) return;
  const facture = context.dataset.createFacture(meta);
  sendJson(context.res, 201, { status: 'success', numeroInterneFacture: facture.numeroInterneFacture, comment: null });
};

export const createConvention: RouteHandler = (context) => {
  const meta = metadata(context, 'convention');
  if (!meta) return;
  sendJson(context.res, 201, {
    status: 'success',
    numeroConvention: context.dataset.nextReference('CONV'),
    numeroInterneDossier: typeof meta['numeroInterneDossier'] === 'string' ? meta['numeroInterneDossier'] : null,
    comment: null,
  });
};

export const createCertificat: RouteHandler = (context) => {
  const meta = metadata(context, 'certificat');
  if (!meta) return;
  sendJson(context.res, 201, {
    status: 'success',
    numeroCertificat: context.dataset.nextReference('CERT'),
    comment: null,
  });
};

export const createDocument: RouteHandler = (context) => {
  const meta = metadata(context, 'infosFichier');
  if (!meta) return;
  sendJson(context.res, 201, { status: 'success', idDocument: context.dataset.nextReference('DOC'), comment: null });
};
