/**
 * POST routes of the classic shape: the JSON dossier and the multipart uploads, whose JSON
 * metadata always travels in a part named `metadata`. Bodies are snake_case with French dates
 * (classic-bodies.ts); every refusal is a 400 `{erreur}`.
 */
import { ClassicBodyError, fromClassic } from './classic-bodies.js';
import { CLASSIC_DOSSIER_ETATS, CLASSIC_FACTURE_ETATS } from './classic-states.js';
import { toClassic } from './classic-wire.js';
import { sendClassicError, sendJson } from './exchange.js';
import type { RouteContext, RouteHandler } from './route-context.js';

export const CLASSIC_METADATA_PART = 'metadata';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const invalid = (context: RouteContext, detail: string) =>
  sendClassicError(context.res, 400, `Paramètres invalides : ${detail}`);

/** Canonical form of a classic body object; answers 400 and returns undefined when it is refused. */
function canonical(context: RouteContext, body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body)) {
    invalid(context, 'objet JSON attendu');
    return undefined;
  }
  try {
    return fromClassic(body) as Record<string, unknown>;
  } catch (error) {
    if (!(error instanceof ClassicBodyError)) throw error;
    sendClassicError(context.res, 400, error.message);
    return undefined;
  }
}

export function createDossier(context: RouteContext): void {
  if (context.bodyError) {
    invalid(context, context.bodyError);
    return;
  }
  if (context.received.json === undefined) {
    invalid(context, 'corps JSON attendu');
    return;
  }
  const body = canonical(context, context.received.json);
  if (!body) return;
  if (!isObject(body['cerfa'])) {
    invalid(context, 'cerfa obligatoire');
    return;
  }
  const dossier = context.dataset.createDossier({
    cerfa: body['cerfa'],
    numeroExterne: typeof body['numeroExterne'] === 'string' ? body['numeroExterne'] : undefined,
    numeroDeca: typeof body['numeroDeca'] === 'string' ? body['numeroDeca'] : undefined,
  });
  sendJson(
    context.res,
    201,
    toClassic({
      numeroInterne: dossier.numeroInterne,
      numeroExterne: dossier.numeroExterne,
      etat: CLASSIC_DOSSIER_ETATS[dossier.etat],
    }),
  );
}

/** The canonical metadata of a multipart route; answers 400 and returns undefined when it is missing or refused. */
function metadata(context: RouteContext): Record<string, unknown> | undefined {
  const { received, bodyError } = context;
  if (bodyError) {
    invalid(context, bodyError);
    return undefined;
  }
  if (!received.parts) {
    invalid(context, 'multipart/form-data attendu');
    return undefined;
  }
  const part = received.parts.find((p) => p.name === CLASSIC_METADATA_PART);
  if (!part) {
    invalid(context, `partie '${CLASSIC_METADATA_PART}' manquante`);
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(part.content.toString('utf8'));
  } catch {
    invalid(context, `la partie '${CLASSIC_METADATA_PART}' doit contenir un objet JSON`);
    return undefined;
  }
  if (!isObject(parsed)) {
    invalid(context, `la partie '${CLASSIC_METADATA_PART}' doit contenir un objet JSON`);
    return undefined;
  }
  return canonical(context, parsed);
}

export const createFacture: RouteHandler = (context) => {
  const meta = metadata(context);
  if (!meta) return;
  const facture = context.dataset.createFacture(meta);
  sendJson(
    context.res,
    201,
    toClassic({
      numeroInterneFacture: facture.numeroInterneFacture,
      etatFacture: CLASSIC_FACTURE_ETATS[facture.etatFacture],
    }),
  );
};

export const createConvention: RouteHandler = (context) => {
  const meta = metadata(context);
  if (!meta) return;
  sendJson(
    context.res,
    201,
    toClassic({
      numeroConvention: context.dataset.nextReference('CONV'),
      numeroInterneDossier: typeof meta['numeroInterneDossier'] === 'string' ? meta['numeroInterneDossier'] : null,
    }),
  );
};

export const createDocument: RouteHandler = (context) => {
  const meta = metadata(context);
  if (!meta) return;
  sendJson(context.res, 201, toClassic({ idDocument: context.dataset.nextReference('DOC') }));
};
