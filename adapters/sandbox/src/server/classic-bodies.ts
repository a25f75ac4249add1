/**
 * Request bodies of the classic shape (the JSON dossier, the multipart `metadata` parts): names
 * must be snake_case and dates `DD/MM/YYYY`. They are translated to the canonical camelCase /
 * ISO form before they reach the dataset; what was sent stays in `received` untouched.
 */
import { frenchToIso, isDateField } from './french-dates.js';
import { isSnakeCase, snakeToCamel } from './snake-case.js';

/** A body the classic upstream refuses; the message is the French one it answers with. */
export class ClassicBodyError extends Error {}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** Canonical copy of a classic body; throws ClassicBodyError naming the first bad field. */
export function fromClassic(value: unknown, path = ''): unknown {
  if (Array.isArray(value)) return value.map((item, i) => fromClassic(item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    const where = join(path, name);
    if (!isSnakeCase(name)) {
      throw new ClassicBodyError(
        `Paramètres invalides : champ '${where}' inconnu, les noms de champs sont en snake_case`,
      );
    }
    if (isDateField(name) && field !== null) {
      const iso = typeof field === 'string' ? frenchToIso(field) : undefined;
      if (iso === undefined) {
        throw new ClassicBodyError(`Date invalide : le champ '${where}' doit être au format JJ/MM/AAAA`);
      }
      out[snakeToCamel(name)] = iso;
      continue;
    }
    out[snakeToCamel(name)] = fromClassic(field, where);
  }
  return out;
}
