/**
 * How records look on the classic wire: the canonical records (wire.ts, without the common
 * shape's quirks) with snake_case names, French dates and the classic state words.
 */
import { CLASSIC_DOSSIER_ETATS, CLASSIC_FACTURE_ETATS } from './classic-states.js';
import { isDateField, isoToFrench } from './french-dates.js';
import type { SandboxDossier, SandboxFacture } from './records.js';
import { camelToSnake } from './snake-case.js';
import { dossierRecord, etatItem, factureItem } from './wire.js';

const CANONICAL = { stateTypos: false, bareArrays: false } as const;

/** Deep copy with every name in snake_case and every date field's ISO date as `DD/MM/YYYY`. */
export function toClassic(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toClassic);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    out[camelToSnake(name)] = isDateField(name) && typeof field === 'string' ? isoToFrench(field) : toClassic(field);
  }
  return out;
}

/** One dossier, as `GET /api/v3/dossier` and `GET /api/v3/dossiers` return it: no `status` envelope. */
export function classicDossier(d: SandboxDossier): unknown {
  const { status: _envelope, ...record } = dossierRecord(d, CANONICAL);
  return toClassic({ ...record, etat: CLASSIC_DOSSIER_ETATS[d.etat] });
}

export function classicEtatItem(d: SandboxDossier): unknown {
  return toClassic({ ...etatItem(d, CANONICAL), etat: CLASSIC_DOSSIER_ETATS[d.etat] });
}

export function classicFacture(f: SandboxFacture): unknown {
  return toClassic({ ...factureItem(f), etatFacture: CLASSIC_FACTURE_ETATS[f.etatFacture] });
}
