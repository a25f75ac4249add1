/**
 * The port's filter subset, evaluated with MongoDB's semantics rather than nedb's, so that code
 * tested against the embedded store behaves the same on MongoDB. nedb differs where it matters:
 * `{a: null}` does not match a missing field, `$ne`/`$nin` on an array field match when any one
 * element differs, `$eq` is unknown, and an object operand is compared ignoring key order.
 */
import type { Filter } from '../ports/store.js';

export type Predicate = (doc: unknown) => boolean;

type Comparison = '$gt' | '$gte' | '$lt' | '$lte';

/**
 * Validates `filter` and returns its predicate. Validation is eager so that an operator outside
 * the port fails on an empty collection too, not only once a document reaches it.
 */
export function compileFilter(filter: Filter): Predicate {
  if (!isPlainObject(filter)) throw new TypeError('a filter must be a plain object');
  const parts: Predicate[] = Object.entries(filter).map(([key, condition]) => {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0)
        throw new TypeError(`${key} needs a non-empty array of filters`);
      const clauses = condition.map((clause) => compileFilter(clause as Filter));
      return key === '$and' ? (doc) => clauses.every((c) => c(doc)) : (doc) => clauses.some((c) => c(doc));
    }
    if (key.startsWith('$')) throw new TypeError(`unsupported filter operator ${key}`);
    const path = key.split('.');
    const test = compileCondition(key, condition);
    if (path.length > 1) return (doc) => test.many(valuesAt(doc, path));
    // A top-level field holding one value, nearly every case: no arrays of values to build.
    return (doc) => {
      // Stored documents are plain objects (the collection copies what it is given).
      const value = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)[key] : undefined;
      return Array.isArray(value) ? test.many([value]) : test.one(value);
    };
  });
  if (parts.length === 1) return parts[0];
  return (doc) => {
    for (const part of parts) if (!part(doc)) return false;
    return true;
  };
}

/**
 * The fields an upsert copies from its filter: plain equalities and `$eq`, also inside `$and`.
 * Like MongoDB, `$or` and the other operators contribute nothing.
 */
export function equalityFields(filter: Filter): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const visit = (f: Filter): void => {
    for (const [key, condition] of Object.entries(f)) {
      if (key === '$and') (condition as Filter[]).forEach(visit);
      else if (key.startsWith('$')) continue;
      else if (!isOperatorObject(condition)) fields[key] = condition;
      else if ('$eq' in condition) fields[key] = condition.$eq;
    }
  };
  visit(filter);
  return fields;
}

/**
 * A condition on the values found at one path (`many`), and the same on a path that reached one
 * value that is not an array (`one`): a scalar's candidates are itself alone, so `one` needs
 * no arrays — the embedded store runs it for every document a search looks at.
 */
interface Condition {
  many: (values: unknown[]) => boolean;
  one: (value: unknown) => boolean;
}

/** Condition on the values found at one path: an operator object, or an equality. */
function compileCondition(key: string, condition: unknown): Condition {
  if (condition === undefined) {
    // The driver drops undefined keys, which would silently widen the filter to everything.
    throw new TypeError(`filter field ${key} is undefined`);
  }
  if (!isOperatorObject(condition))
    return { many: (values) => anyEquals(values, condition), one: (value) => valuesEqual(value, condition) };
  const tests = Object.entries(condition).map(([op, operand]): Condition => {
    if (operand === undefined) throw new TypeError(`filter field ${key}: ${op} operand is undefined`);
    switch (op) {
      case '$eq':
        return { many: (values) => anyEquals(values, operand), one: (value) => valuesEqual(value, operand) };
      case '$ne':
        return { many: (values) => !anyEquals(values, operand), one: (value) => !valuesEqual(value, operand) };
      case '$in': {
        const list = listOperand(key, op, operand);
        return {
          many: (values) => list.some((x) => anyEquals(values, x)),
          one: (value) => list.some((x) => valuesEqual(value, x)),
        };
      }
      case '$nin': {
        const list = listOperand(key, op, operand);
        return {
          many: (values) => !list.some((x) => anyEquals(values, x)),
          one: (value) => !list.some((x) => valuesEqual(value, x)),
        };
      }
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        return { many: (values) => anyCompares(values, op, operand), one: (value) => compares(value, op, operand) };
      case '$exists':
        return operand
          ? { many: (values) => values.some((v) => v !== undefined), one: (value) => value !== undefined }
          : { many: (values) => values.every((v) => v === undefined), one: (value) => value === undefined };
      default:
        throw new TypeError(`unsupported filter operator ${op} on ${key}`);
    }
  });
  if (tests.length === 1) return tests[0];
  return {
    many: (values) => tests.every((test) => test.many(values)),
    one: (value) => tests.every((test) => test.one(value)),
  };
}

function listOperand(key: string, op: string, operand: unknown): unknown[] {
  if (!Array.isArray(operand)) throw new TypeError(`filter field ${key}: ${op} needs an array`);
  return operand;
}

/**
 * The values a dotted path reaches, MongoDB style: a path crossing an array fans out over its
 * elements (or picks one with a numeric segment); `undefined` stands for "missing".
 */
function valuesAt(value: unknown, path: string[]): unknown[] {
  if (path.length === 0) return [value];
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) {
    if (/^\d+$/.test(head)) return valuesAt(value[Number(head)], rest);
    const found = value.flatMap((el) => (isPlainObject(el) ? valuesAt(el, path) : []));
    return found.length > 0 ? found : [undefined];
  }
  if (isPlainObject(value)) return valuesAt(value[head], rest);
  return [undefined];
}

/** An array value matches when it equals the operand as a whole or through one element. */
function candidates(value: unknown): unknown[] {
  return Array.isArray(value) ? [value, ...(value as unknown[])] : [value];
}

function anyEquals(values: unknown[], operand: unknown): boolean {
  return values.some((v) => candidates(v).some((c) => valuesEqual(c, operand)));
}

function anyCompares(values: unknown[], op: Comparison, operand: unknown): boolean {
  return values.some((v) => candidates(v).some((c) => compares(c, op, operand)));
}

/** One candidate value against a comparison. */
function compares(value: unknown, op: Comparison, operand: unknown): boolean {
  // MongoDB: `$gte: null` / `$lte: null` match null and missing; `$gt: null` / `$lt: null` nothing.
  if (operand === null) return (op === '$gte' || op === '$lte') && (value === null || value === undefined);
  const order = compareSameType(value, operand);
  if (order === undefined) return false;
  return op === '$gt' ? order > 0 : op === '$gte' ? order >= 0 : op === '$lt' ? order < 0 : order <= 0;
}

/** Order of two values of one type; undefined across types, as MongoDB's type bracketing. */
export function compareSameType(a: unknown, b: unknown): number | undefined {
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (typeof a !== typeof b) return undefined;
  if (typeof a === 'number' || typeof a === 'string' || typeof a === 'boolean') {
    return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  }
  return undefined;
}

/** BSON equality: missing equals null, Dates by instant, documents field by field in order. */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === undefined || a === null || b === null || b === undefined) {
    return (a === undefined || a === null) && (b === undefined || b === null);
  }
  if (a instanceof Date || b instanceof Date)
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => valuesEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    return ak.length === bk.length && ak.every((k, i) => k === bk[i] && valuesEqual(a[k], b[k]));
  }
  return a === b;
}

/** A JSON-like object: not an array, a Date, an ObjectId or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `{ $gt: 1, $lt: 5 }` as opposed to a sub-document to compare whole; mixing both is an error. */
function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const operators = keys.filter((k) => k.startsWith('$')).length;
  if (operators > 0 && operators < keys.length)
    throw new TypeError('a filter condition cannot mix operators and fields');
  return operators > 0;
}
