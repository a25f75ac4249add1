/**
 * The transform vocabulary of upstream profiles (SPEC 1.1 steps 5 and 7, 4.16).
 *
 * Each export is a factory returning a named, pure `Transform`. Profiles compose them as data,
 * so every transform follows the same three rules:
 * - it never mutates its input: the output is a fresh copy that shares no object or array with
 *   the input, so later pipeline steps may mutate it without touching what the caller kept
 *   (a stored job body, for instance, is transformed again on retry);
 * - a path that is missing, or that crosses a value of the wrong type, leaves the value as it
 *   was: the upstream or the client may omit optional fields, and drift is reported by response
 *   validation (step 8), not by a transform;
 * - a value it cannot convert is left as is, so validation can name the bad field.
 *
 * Paths are dotted (`cerfa.apprenti.nom`). `*` matches every element of an array or every key of
 * an object (`lignes.*.numeroDossier`); a number matches one array element (`lignes.0.montant`).
 */
import type { Transform } from './profile.js';
import { isPlainObject } from '../store/filter-matching.js';
import { fieldRenamer, type FieldCase } from './field-case.js';
import { kernelError } from '../errors/kernel-errors.js';

type JsonObject = Record<string, unknown>;
type Container = JsonObject | unknown[];

/** Deep copy of arrays and plain objects; any other value (string, number, Date...) is kept. */
function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (isPlainObject(value)) {
    const copy: JsonObject = {};
    for (const [key, item] of Object.entries(value)) copy[key] = cloneJson(item);
    return copy as T;
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// The one path resolver every transform uses.

/** Splits and checks a path once, when the profile is defined, so a typo fails at load time. */
function parsePath(path: string): string[] {
  const segments = path.split('.');
  if (segments.some((segment) => segment === '')) {
    throw kernelError('OPCO_ERR_TRANSFORM_INVALID', { what: `transform path "${path}"`, problem: 'empty segment' });
  }
  return segments;
}

/**
 * Calls `visit(container, key)` for every existing slot the path designates inside `root`.
 * The last segment names the slot; the ones before it are walked. Missing keys, out-of-range
 * indexes and scalars in the way simply yield no slot.
 */
function forEachSlot(
  root: unknown,
  segments: readonly string[],
  visit: (container: Container, key: string | number) => void,
): void {
  const [head, ...rest] = segments;
  if (head === undefined) return;
  for (const key of matchingKeys(root, head)) {
    const container = root as Container;
    if (rest.length === 0) visit(container, key);
    else forEachSlot((container as JsonObject)[key], rest, visit);
  }
}

function matchingKeys(value: unknown, segment: string): Array<string | number> {
  if (Array.isArray(value)) {
    if (segment === '*') return value.map((_, index) => index);
    const index = /^\d+$/.test(segment) ? Number(segment) : -1;
    return index >= 0 && index < value.length ? [index] : [];
  }
  if (isPlainObject(value)) {
    if (segment === '*') return Object.keys(value);
    return Object.hasOwn(value, segment) ? [segment] : [];
  }
  return [];
}

/** A transform that rewrites, on a copy, the value found at each of `paths` with `convert`. */
function atPaths(name: string, paths: readonly string[], convert: (value: unknown) => unknown): Transform {
  const parsed = paths.map(parsePath);
  const rewrite = (copy: unknown): unknown => {
    for (const segments of parsed) {
      forEachSlot(copy, segments, (container, key) => {
        (container as JsonObject)[key] = convert((container as JsonObject)[key]);
      });
    }
    return copy;
  };
  return { name, paths: [...paths], apply: (value) => rewrite(cloneJson(value)), rewrite };
}

/** Rebuilds a value deeply, letting `onEntry` keep, drop or rewrite each object property. */
function mapDeep(value: unknown, onEntry: (key: string, item: unknown) => { keep: boolean; value?: unknown }): unknown {
  if (Array.isArray(value)) return value.map((item) => mapDeep(item, onEntry));
  if (!isPlainObject(value)) return value;
  const result: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const entry = onEntry(key, item);
    if (entry.keep) result[key] = mapDeep(entry.value, onEntry);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The vocabulary.

/** Removes leading and trailing white space from string values. */
export function trim(paths: readonly string[]): Transform {
  return atPaths('trim', paths, (value) => (typeof value === 'string' ? value.trim() : value));
}

/** Upper-cases string values (accents kept: `é` becomes `É`). Does not trim; compose with `trim`. */
export function uppercase(paths: readonly string[]): Transform {
  return atPaths('uppercase', paths, (value) => (typeof value === 'string' ? value.toUpperCase() : value));
}

export interface DateFormatOptions {
  /** How dates are written: `YYYY-MM-DD` (the service's and most upstreams') or `DD/MM/YYYY`. */
  to?: 'YYYY-MM-DD' | 'DD/MM/YYYY';
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const FRENCH_DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;
const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

function realDate(year: string, month: string, day: string): boolean {
  const y = Number(year),
    m = Number(month),
    d = Number(day);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * Writes dates as `to` (default `YYYY-MM-DD`). Reads `YYYY-MM-DD`, `DD/MM/YYYY` and ISO 8601
 * timestamps; a timestamp stands for the calendar date written in it, its first ten characters
 * (D31: CFA software sends what its date library prints, and the date it wrote is the date it
 * meant, whatever the offset). Anything else, impossible dates included (`31/02/2024`), is left
 * as is for validation to report.
 */
export function dateFormat(paths: readonly string[], options: DateFormatOptions = {}): Transform {
  const write = (y: string, m: string, d: string) =>
    options.to === 'DD/MM/YYYY' ? `${d}/${m}/${y}` : `${y}-${m}-${d}`;
  const format = (value: unknown): unknown => {
    if (typeof value !== 'string') return value;
    const iso = ISO_DATE.exec(value) ?? ISO_TIMESTAMP.exec(value);
    if (iso) return realDate(iso[1], iso[2], iso[3]) ? write(iso[1], iso[2], iso[3]) : value;
    const french = FRENCH_DATE.exec(value);
    if (french) return realDate(french[3], french[2], french[1]) ? write(french[3], french[2], french[1]) : value;
    return value;
  };
  return atPaths('dateFormat', paths, format);
}

/**
 * Removes every object property whose value is null, at any depth, including in objects inside
 * arrays. Null array elements are kept: removing them would shift the positions of the others.
 * An object left empty stays (as `{}`).
 */
export function dropNulls(): Transform {
  return {
    name: 'dropNulls',
    apply: (value) => mapDeep(value, (_key, item) => ({ keep: item !== null, value: item })),
  };
}

/**
 * Renames fields: each key of `map` is the dotted path of a field, its value the new name at the
 * same level (`{ 'lignes.*.numDossier': 'numeroDossier' }`). Like `mv`, a field already bearing
 * the new name is overwritten.
 */
export function rename(map: Readonly<Record<string, string>>): Transform {
  const moves = Object.entries(map).map(([path, newName]) => {
    const segments = parsePath(path);
    if (segments[segments.length - 1] === '*' || newName === '' || newName.includes('.')) {
      throw kernelError('OPCO_ERR_TRANSFORM_INVALID', {
        what: `rename "${path}" -> "${newName}"`,
        problem: 'rename one named field to a plain name',
      });
    }
    return { segments, newName };
  });
  const rewrite = (copy: unknown): unknown => {
    for (const { segments, newName } of moves) {
      forEachSlot(copy, segments, (container, key) => {
        if (Array.isArray(container) || key === newName) return;
        const moved = container[key];
        delete container[key];
        container[newName] = moved;
      });
    }
    return copy;
  };
  return {
    name: 'rename',
    paths: Object.keys(map),
    reshapes: true,
    apply: (value) => rewrite(cloneJson(value)),
    rewrite,
  };
}

/** Writes finite numbers as strings (`35` becomes `"35"`); other values are left as is. */
export function toString(paths: readonly string[]): Transform {
  return atPaths('toString', paths, (value) =>
    typeof value === 'number' && Number.isFinite(value) ? String(value) : value,
  );
}

/** Replaces string values found in `map` by their image; strings not in `map` are left as is. */
export function mapValues(paths: readonly string[], map: Readonly<Record<string, unknown>>): Transform {
  return atPaths('mapValues', paths, (value) => lookup(map, value));
}

function lookup(map: Readonly<Record<string, unknown>>, value: unknown): unknown {
  // Object.hasOwn, so that a value such as "constructor" is never mapped through the prototype.
  return typeof value === 'string' && Object.hasOwn(map, value) ? cloneJson(map[value]) : value;
}

/** SPEC 4.16 "State corrections": typos and labels some upstreams send instead of the spec's states. */
export const STATE_CORRECTIONS: Readonly<Record<string, string>> = Object.freeze({
  RUTPURE: 'RUPTURE',
  'En cours': 'EN_COURS_INSTRUCTION',
  Valide: 'ENGAGE',
  Refuse: 'REFUSE',
});

/** The property names that carry a dossier or invoice state in upstream answers (SPEC 2.1-2.4). */
export const STATE_KEYS: readonly string[] = Object.freeze(['etat', 'etatDossier', 'etatFacture']);

/**
 * Corrects states wherever they appear: every property, at any depth, whose name is in `keys`
 * has its value mapped with `map`. Deep rather than path-based because the same state shows up
 * in a dossier record, in etats items and in each record of a liste.
 */
export function correctStates(
  map: Readonly<Record<string, string>> = STATE_CORRECTIONS,
  keys: readonly string[] = STATE_KEYS,
): Transform {
  const stateKeys = new Set(keys);
  const correct = (key: string, item: unknown): unknown => (stateKeys.has(key) ? lookup(map, item) : item);
  return {
    name: 'correctStates',
    apply: (value) => mapDeep(value, (key, item) => ({ keep: true, value: correct(key, item) })),
    rewrite: (owned) => rewriteDeep(owned, correct),
  };
}

/**
 * mapDeep keeping every property, in place: for a value the caller owns. Every answer of a route
 * with state corrections goes through it, so it allocates nothing (for...in, no key array) and
 * writes only what changed: half of what it cost on a freshly parsed answer (bench/RESULTS.md).
 */
function rewriteDeep(value: unknown, convert: (key: string, item: unknown) => unknown): unknown {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) rewriteDeep(value[i], convert);
  } else if (isPlainObject(value)) {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const was = value[key];
      const item = convert(key, was);
      if (item !== was) value[key] = item;
      if (item !== null && typeof item === 'object') rewriteDeep(item, convert);
    }
  }
  return value;
}

/**
 * Some upstreams answer a paged route with a bare array. This wraps it into the page object of
 * the spec (SPEC 2.2): `{status: 'success', total: n, count: n, page: 1, [key]: array}`.
 * Anything that is not an array is left as is.
 */
export function wrapBareArray(key: string): Transform {
  const wrap = (value: unknown): unknown =>
    Array.isArray(value)
      ? { status: 'success', total: value.length, count: value.length, page: 1, [key]: value }
      : value;
  return {
    name: 'wrapBareArray',
    reshapes: true,
    apply(value) {
      return wrap(cloneJson(value));
    },
    rewrite: (owned) => wrap(owned),
  };
}

export interface RenameKeysOptions {
  /** camelCase names the regular snake -> camel rule cannot restore (`IBAN`, `referenceFactureCFA`). */
  irregular?: readonly string[];
}

/**
 * Renames every property name, at any depth, into one style (field-case.ts): `'snake'` for an
 * upstream that speaks snake_case (requests), `'camel'` to bring its answers back to the SPEC's
 * names, with the irregular names restored. Values are untouched. Deep rather than path-based:
 * the style is the upstream's whole vocabulary, not a few fields.
 */
export function renameKeys(style: FieldCase, options: RenameKeysOptions = {}): Transform {
  const renamed = fieldRenamer(style, options.irregular);
  const rebuild = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rebuild);
    if (!isPlainObject(value)) return value;
    const result: JsonObject = {};
    for (const [key, item] of Object.entries(value)) result[renamed(key)] = rebuild(item);
    return result;
  };
  return { name: 'renameKeys', reshapes: true, apply: rebuild };
}

export interface PageFromOptions {
  /** Field of the upstream page holding the items (`items`). */
  items: string;
  /** Field holding the number of items over all pages (`totalElements`). */
  total: string;
  /** Field holding the page's number (`page`). */
  page: string;
  /** Number of the upstream's first page: 0 for APIs that count pages from 0. */
  base: number;
  /** Name of the list in the service's page object (`EtatDossierResult`, `factures`). */
  into: string;
}

/**
 * Turns an upstream page (`{items, totalElements, page (0-based), size}`) into the page object
 * of SPEC 2.2 and 2.4: `{status: 'success', total, count, page (from 1), [into]: items}`. Other
 * fields of the upstream page (its size...) are dropped. A value without an array at `items`
 * (a bare array, an error body) is left as is, so `wrapBareArray` can follow.
 */
export function pageFrom(options: PageFromOptions): Transform {
  return {
    name: 'pageFrom',
    paths: [options.items, options.total, options.page],
    reshapes: true,
    apply(value) {
      if (!isPlainObject(value) || !Array.isArray(value[options.items])) return cloneJson(value);
      const items = cloneJson(value[options.items] as unknown[]);
      const total = value[options.total];
      const page = value[options.page];
      return {
        status: 'success',
        total: typeof total === 'number' ? total : items.length,
        count: items.length,
        page: typeof page === 'number' ? page - options.base + 1 : 1,
        [options.into]: items,
      };
    },
  };
}

/**
 * Renumbers ordinals counted from `from` into ordinals counted from `to`: the service's
 * `numeroPage` counts from 1, some upstreams' `page` from 0. Numbers and strings of digits (query
 * values are strings) are converted, keeping their type; a value below `from` is left as is.
 */
export function renumber(paths: readonly string[], options: { from: number; to: number }): Transform {
  const shift = options.to - options.from;
  return atPaths('renumber', paths, (value) => {
    if (typeof value === 'number' && Number.isInteger(value) && value >= options.from) return value + shift;
    if (typeof value === 'string' && /^\d{1,15}$/.test(value) && Number(value) >= options.from)
      return String(Number(value) + shift);
    return value;
  });
}

/**
 * Sets fields an upstream leaves out: each key of `map` is the dotted path of a field, its value
 * what the field gets when it is absent or null (`{status: 'success', 'dossiers.*.status':
 * 'success'}` for an upstream without the SPEC's `status` envelope). The field's parent must
 * exist and be an object; a present value is kept.
 */
export function setDefaults(map: Readonly<Record<string, unknown>>): Transform {
  const fields = Object.entries(map).map(([path, fallback]) => {
    const segments = parsePath(path);
    const last = segments.pop()!;
    if (last === '*')
      throw kernelError('OPCO_ERR_TRANSFORM_INVALID', {
        what: `default "${path}"`,
        problem: 'name one field, not a wildcard',
      });
    return { parent: segments, last, fallback };
  });
  const rewrite = (copy: unknown): unknown => {
    for (const { parent, last, fallback } of fields) {
      const fill = (container: unknown) => {
        if (!isPlainObject(container)) return;
        if (container[last] === undefined || container[last] === null) container[last] = cloneJson(fallback);
      };
      if (parent.length === 0) fill(copy);
      else forEachSlot(copy, parent, (container, key) => fill((container as JsonObject)[key]));
    }
    return copy;
  };
  return { name: 'setDefaults', paths: Object.keys(map), apply: (value) => rewrite(cloneJson(value)), rewrite };
}

/**
 * Applies transforms in order, as pipeline steps 5 and 7 do with a route's lists. The result
 * shares nothing with `value` (when there is a transform), yet the value is copied once at most:
 * each `apply` returns a fresh copy, which the next transform may then `rewrite` in place.
 * `owned` says the caller's value is its own already (a freshly parsed answer): not even one copy.
 */
export function applyTransforms(value: unknown, transforms: readonly Transform[] = [], owned = false): unknown {
  let current = value;
  for (const transform of transforms) {
    if (transform.rewrite && owned) current = transform.rewrite(current);
    else current = transform.apply(current);
    owned = true;
  }
  return current;
}
