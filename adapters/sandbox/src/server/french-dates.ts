/**
 * The classic shape's dates: `DD/MM/YYYY` on the wire, both ways, while the dataset keeps the
 * SPEC's `YYYY-MM-DD`. A field is a date when its name is `date` or starts with `date` followed
 * by a new word: `dateNaissance` / `date_naissance`, `dateModification` / `date_modification`.
 */
import { isIsoDate } from './identities.js';

const FRENCH_DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

export function isDateField(name: string): boolean {
  return /^date($|_|[A-Z])/.test(name);
}

/** `2025-06-30` → `30/06/2025`; anything that is not an ISO date is returned unchanged. */
export function isoToFrench(value: string): string {
  return isIsoDate(value) ? `${value.slice(8, 10)}/${value.slice(5, 7)}/${value.slice(0, 4)}` : value;
}

/** `30/06/2025` → `2025-06-30`; undefined when the value is not a real calendar date in that format. */
export function frenchToIso(value: string): string | undefined {
  const match = FRENCH_DATE.exec(value);
  if (!match) return undefined;
  const iso = `${match[3]}-${match[2]}-${match[1]}`;
  return isIsoDate(iso) ? iso : undefined;
}
