/**
 * The embedded store's order of values, for sorted reads: the order nedb gave them, kept so
 * that sorted reads do not change with the store's engine. Across types: missing < null <
 * numbers < strings < booleans < Dates < arrays < objects; arrays element by element, objects
 * by their values in the order of their sorted keys.
 */
export function compareValues(a: unknown, b: unknown): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return Math.sign(rank);
  if (a === undefined || a === null) return 0;
  if (a instanceof Date) return ordered(a.getTime(), (b as Date).getTime());
  if (typeof a !== 'object') return ordered(a as number, b as number);
  if (Array.isArray(a)) {
    const other = b as unknown[];
    for (let i = 0; i < Math.min(a.length, other.length); i++) {
      const order = compareValues(a[i], other[i]);
      if (order !== 0) return order;
    }
    return ordered(a.length, other.length);
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const leftKeys = Object.keys(left).sort();
  const rightKeys = Object.keys(right).sort();
  for (let i = 0; i < Math.min(leftKeys.length, rightKeys.length); i++) {
    const order = compareValues(left[leftKeys[i]], right[rightKeys[i]]);
    if (order !== 0) return order;
  }
  return ordered(leftKeys.length, rightKeys.length);
}

function typeRank(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null) return 1;
  switch (typeof value) {
    case 'number':
      return 2;
    case 'string':
      return 3;
    case 'boolean':
      return 4;
    default:
      return value instanceof Date ? 5 : Array.isArray(value) ? 6 : 7;
  }
}

function ordered<V extends number | string | boolean>(a: V, b: V): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The value a sort key reads at a dotted path: a numeric segment picks an array's element, any
 * other segment crossing an array gives the array of what each element holds there.
 */
export function valueAt(doc: unknown, path: string | string[]): unknown {
  const parts = typeof path === 'string' ? path.split('.') : path;
  let value: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    if (value === null || typeof value !== 'object') return undefined;
    const next: unknown = (value as Record<string, unknown>)[parts[i]];
    if (Array.isArray(next) && i + 1 < parts.length) {
      const index = Number.parseInt(parts[i + 1], 10);
      if (!Number.isNaN(index)) return valueAt(next[index], parts.slice(i + 2));
      return next.map((element) => valueAt(element, parts.slice(i + 1)));
    }
    value = next;
  }
  return value;
}
