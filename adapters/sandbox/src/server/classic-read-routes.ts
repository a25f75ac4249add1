/** GET routes of the classic shape, under /api/v3: snake_case queries, 0-based pages, 400 for not found. */
import { classicDossier, classicEtatItem, classicFacture } from './classic-wire.js';
import { sendClassicError, sendJson } from './exchange.js';
import { frenchToIso, isoToFrench } from './french-dates.js';
import { CFA_KEY_END_OF_VALIDITY } from './read-routes.js';
import type { RouteContext } from './route-context.js';
import { REFUSED_API_KEY } from './routes.js';

export const CLASSIC_MAX_NUMEROS = 20;
/** How these upstreams say "not found": a 400 with this message. */
export const CLASSIC_UNKNOWN_DOSSIER = 'Dossier inconnu : aucun dossier ne correspond aux critères';
export const CLASSIC_VERSIONS = ['3.0', '3.1'] as const;

const invalid = (context: RouteContext, detail: string) =>
  sendClassicError(context.res, 400, `Paramètres invalides : ${detail}`);

/** The classic upstream refuses query parameters it does not know (a camelCase name among them). */
function onlyParams(context: RouteContext, allowed: readonly string[]): boolean {
  const unknown = Object.keys(context.query).find((name) => !allowed.includes(name));
  if (unknown === undefined) return true;
  invalid(context, `paramètre inconnu '${unknown}'`);
  return false;
}

interface Filters {
  year?: number;
  /** ISO date, translated from the query's DD/MM/YYYY. */
  since?: string;
  page: number;
}

/** The filters shared by both etats routes; answers 400 and returns undefined when one is bad. */
function filters(context: RouteContext): Filters | undefined {
  const { annee, date_modification: date, page } = context.query;
  if (annee !== undefined && !/^\d{4}$/.test(annee)) {
    invalid(context, 'annee doit être une année sur 4 chiffres');
    return undefined;
  }
  const since = date === undefined ? undefined : frenchToIso(date);
  if (date !== undefined && since === undefined) {
    invalid(context, 'date_modification doit être au format JJ/MM/AAAA');
    return undefined;
  }
  if (page !== undefined && !/^\d+$/.test(page)) {
    invalid(context, 'page doit être un entier à partir de 0');
    return undefined;
  }
  return { year: annee === undefined ? undefined : Number(annee), since, page: Number(page ?? '0') };
}

/** Page object of the classic shape, pages numbered from 0; `size` is the page size asked of the upstream. */
function page<T>(
  items: T[],
  number: number,
  size: number,
): { items: T[]; totalElements: number; page: number; size: number } {
  return { items: items.slice(number * size, (number + 1) * size), totalElements: items.length, page: number, size };
}

export function statut(context: RouteContext): void {
  if (!onlyParams(context, [])) return;
  sendJson(context.res, 200, { etat: 'OK', versions_supportees: CLASSIC_VERSIONS });
}

export function dossier(context: RouteContext): void {
  if (!onlyParams(context, ['numero_interne', 'numero_externe', 'numero_deca'])) return;
  const { numero_interne: interne, numero_externe: externe, numero_deca: deca } = context.query;
  const byInterne = interne !== undefined && externe === undefined && deca === undefined;
  // numero_externe alone is accepted, as in the common shape, for crash-safe duplicate checks (D18).
  const byExterne = interne === undefined && externe !== undefined;
  if (!(byInterne && interne) && !(byExterne && externe)) {
    invalid(context, 'numero_interne, ou numero_externe et numero_deca');
    return;
  }
  const found = byInterne ? context.dataset.dossier(interne) : context.dataset.dossierByExterne(externe, deca);
  if (!found) {
    sendClassicError(context.res, 400, CLASSIC_UNKNOWN_DOSSIER);
    return;
  }
  sendJson(context.res, 200, classicDossier(found));
}

export function dossierEtats(context: RouteContext): void {
  if (!onlyParams(context, ['annee', 'date_modification', 'page'])) return;
  const f = filters(context);
  if (!f) return;
  const matching = context.dataset.dossiers
    .filter(
      (d) =>
        (f.year === undefined || d.anneeDossier === f.year) && (f.since === undefined || d.dateModification >= f.since),
    )
    .map(classicEtatItem);
  // The bare-array quirk is about paging, so it applies here too: no `page`, every item, no envelope.
  if (context.quirks.bareArrays && context.query['page'] === undefined) {
    sendJson(context.res, 200, matching);
    return;
  }
  sendJson(context.res, 200, page(matching, f.page, context.pageSize));
}

export function dossiers(context: RouteContext): void {
  if (!onlyParams(context, ['numeros'])) return;
  const numbers = (context.query['numeros'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (numbers.length === 0) {
    invalid(context, 'numeros obligatoire');
    return;
  }
  if (numbers.length > CLASSIC_MAX_NUMEROS) {
    invalid(context, `numeros : ${CLASSIC_MAX_NUMEROS} numéros maximum`);
    return;
  }
  const found: unknown[] = [];
  const introuvables: string[] = [];
  for (const numero of numbers) {
    const d = context.dataset.dossier(numero);
    if (d) found.push(classicDossier(d));
    else introuvables.push(numero);
  }
  sendJson(context.res, 200, { dossiers: found, introuvables });
}

const FACTURE_FILTERS = [
  'annee',
  'numero_interne_dossier',
  'numero_externe_dossier',
  'reference_facture_cfa',
  'reference_virement',
  'date_modification',
  'page',
] as const;

export function factureEtats(context: RouteContext): void {
  if (!onlyParams(context, FACTURE_FILTERS)) return;
  const f = filters(context);
  if (!f) return;
  const q = context.query;
  const matching = context.dataset.factures.filter(
    (x) =>
      (f.year === undefined || x.anneeFacture === f.year) &&
      (f.since === undefined || x.dateModification >= f.since) &&
      (q['reference_facture_cfa'] === undefined || x.referenceFactureCFA === q['reference_facture_cfa']) &&
      (q['reference_virement'] === undefined || x.referenceVirement === q['reference_virement']) &&
      (q['numero_interne_dossier'] === undefined ||
        x.dossiers.some((l) => l.numeroInterneDossier === q['numero_interne_dossier'])) &&
      (q['numero_externe_dossier'] === undefined ||
        x.dossiers.some((l) => l.numeroExterneDossier === q['numero_externe_dossier'])),
  );
  const p = page(matching, f.page, context.pageSize);
  sendJson(context.res, 200, { ...p, items: p.items.map(classicFacture) });
}

export function cleCfa(context: RouteContext): void {
  if (!onlyParams(context, ['siren', 'cle'])) return;
  const { siren, cle } = context.query;
  if (!siren || !/^\d{9}$/.test(siren)) {
    invalid(context, 'siren doit compter 9 chiffres');
    return;
  }
  if (!cle) {
    invalid(context, 'cle obligatoire');
    return;
  }
  if (cle === REFUSED_API_KEY) {
    sendJson(context.res, 200, {
      statut: 'invalide',
      date_fin_validite: null,
      commentaire: 'Clé inconnue ou révoquée pour ce SIREN',
    });
    return;
  }
  sendJson(context.res, 200, {
    statut: 'valide',
    date_fin_validite: isoToFrench(CFA_KEY_END_OF_VALIDITY),
    commentaire: null,
  });
}
