/** GET routes of the simulated upstream (SPEC 4.16 upstream paths). */
import { sendError, sendJson } from './exchange.js';
import { isIsoDate } from './identities.js';
import type { RouteContext } from './route-context.js';
import { dossierRecord, etatItem, factureItem } from './wire.js';

export const MAX_LISTE_NUMBERS = 50;
export const CFA_KEY_END_OF_VALIDITY = '2027-12-31';

/** Checks the optional filters shared by both etats routes; answers 400 and returns false when one is bad. */
function validFilters(context: RouteContext, yearParam: string): boolean {
  const { query, res } = context;
  if (query[yearParam] !== undefined && !/^\d{4}$/.test(query[yearParam])) {
    sendError(res, 400, `${yearParam} invalide : année sur 4 chiffres attendue`);
    return false;
  }
  if (query['dateModification'] !== undefined && !isIsoDate(query['dateModification'])) {
    sendError(res, 400, 'dateModification invalide : format AAAA-MM-JJ attendu');
    return false;
  }
  if (query['numeroPage'] !== undefined && !/^[1-9]\d*$/.test(query['numeroPage'])) {
    sendError(res, 400, 'numeroPage invalide : entier à partir de 1 attendu');
    return false;
  }
  return true;
}

function page<T>(items: T[], context: RouteContext): { total: number; count: number; page: number; items: T[] } {
  const number = Number(context.query['numeroPage'] ?? '1');
  const slice = items.slice((number - 1) * context.pageSize, number * context.pageSize);
  return { total: items.length, count: slice.length, page: number, items: slice };
}

export function status({ res }: RouteContext): void {
  sendJson(res, 200, { status: 'UP', versions: ['1.0', '1.1'] });
}

export function dossier({ res, query, dataset, quirks }: RouteContext): void {
  const { numeroInterne, numeroExterne, numeroDeca } = query;
  const byInterne = numeroInterne !== undefined && numeroExterne === undefined && numeroDeca === undefined;
  // numeroExterne alone is accepted (looser than the proxy's rule) for crash-safe duplicate checks.
  const byExterne = numeroInterne === undefined && numeroExterne !== undefined;
  if (!(byInterne && numeroInterne) && !(byExterne && numeroExterne)) {
    sendError(res, 400, 'Paramètres invalides : numeroInterne, ou numeroExterne et numeroDeca');
    return;
  }
  const found = byInterne ? dataset.dossier(numeroInterne) : dataset.dossierByExterne(numeroExterne, numeroDeca);
  if (!found) {
    sendError(res, 404, 'Dossier introuvable');
    return;
  }
  sendJson(res, 200, dossierRecord(found, quirks));
}

export function dossierEtats(context: RouteContext): void {
  const { res, query, dataset, quirks } = context;
  if (!validFilters(context, 'anneeDossier')) return;
  const year = query['anneeDossier'] === undefined ? undefined : Number(query['anneeDossier']);
  const since = query['dateModification'];
  const matching = dataset.dossiers
    .filter(
      (d) => (year === undefined || d.anneeDossier === year) && (since === undefined || d.dateModification >= since),
    )
    .map((d) => etatItem(d, quirks));
  // The real upstream drops the page envelope when not asked for a page (README: quirks).
  if (quirks.bareArrays && query['numeroPage'] === undefined) {
    sendJson(res, 200, matching);
    return;
  }
  const p = page(matching, context);
  sendJson(res, 200, { status: 'success', total: p.total, count: p.count, page: p.page, EtatDossierResult: p.items });
}

export function dossierListe({ res, query, dataset, quirks }: RouteContext): void {
  const numbers = (query['numerosInternes'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (numbers.length === 0) {
    sendError(res, 400, 'numerosInternes obligatoire');
    return;
  }
  if (numbers.length > MAX_LISTE_NUMBERS) {
    sendError(res, 400, `numerosInternes : ${MAX_LISTE_NUMBERS} numéros maximum`);
    return;
  }
  const dossiers: Record<string, unknown>[] = [];
  const numerosInternesIntrouvables: string[] = [];
  for (const numero of numbers) {
    const found = dataset.dossier(numero);
    if (found) dossiers.push(dossierRecord(found, quirks));
    else numerosInternesIntrouvables.push(numero);
  }
  sendJson(res, 200, { status: 'success', dossiers, numerosInternesIntrouvables });
}

export function factureEtats(context: RouteContext): void {
  const { res, query, dataset } = context;
  if (!validFilters(context, 'anneeFacture')) return;
  const year = query['anneeFacture'] === undefined ? undefined : Number(query['anneeFacture']);
  const { numeroInterneDossier, numeroExterneDossier, referenceFactureCFA, referenceVirement, dateModification } =
    query;
  const matching = dataset.factures.filter(
    (f) =>
      (year === undefined || f.anneeFacture === year) &&
      (dateModification === undefined || f.dateModification >= dateModification) &&
      (referenceFactureCFA === undefined || f.referenceFactureCFA === referenceFactureCFA) &&
      (referenceVirement === undefined || f.referenceVirement === referenceVirement) &&
      (numeroInterneDossier === undefined || f.dossiers.some((l) => l.numeroInterneDossier === numeroInterneDossier)) &&
      (numeroExterneDossier === undefined || f.dossiers.some((l) => l.numeroExterneDossier === numeroExterneDossier)),
  );
  const p = page(matching, context);
  sendJson(res, 200, {
    status: 'success',
    total: p.total,
    count: p.count,
    page: p.page,
    factures: p.items.map(factureItem),
  });
}

export function cfaKeyInfo({ res, query }: RouteContext): void {
  const { siren, XAPIKEY } = query;
  if (!siren || !/^\d{9,14}$/.test(siren)) {
    sendError(res, 400, 'siren invalide : 9 chiffres attendus');
    return;
  }
  if (!XAPIKEY) {
    sendError(res, 400, 'XAPIKEY obligatoire');
    return;
  }
  sendJson(res, 200, { status: 'success', dateFinValidite: CFA_KEY_END_OF_VALIDITY, comment: null });
}
