/**
 * Sorted reads of the embedded store (`find` with `sort`, `skip`, `limit`), in the order of
 * document-order.ts on each key, dotted paths included, ties kept in the order found. The
 * oldest pending job or the oldest slot is one of thousands of matches, so a small
 * `skip + limit` keeps only that many as it scans (rather than sorting every match), and each
 * key is read once.
 */
import type { SortSpec } from '../ports/store.js';
import { compareValues, valueAt } from './document-order.js';

type Keyed<D> = { keys: unknown[]; doc: D };

export function inSortOrder<D>(docs: readonly D[], sort: SortSpec, skip = 0, limit?: number): D[] {
  const fields = Object.entries(sort);
  const compare = (a: Keyed<D>, b: Keyed<D>): number => {
    for (let i = 0; i < fields.length; i++) {
      const order = fields[i][1] * compareValues(a.keys[i], b.keys[i]);
      if (order !== 0) return order;
    }
    return 0;
  };
  const keyed = (doc: D): Keyed<D> => ({ keys: fields.map(([field]) => valueAt(doc, field)), doc });
  const take = limit ? skip + limit : undefined;
  let kept: Keyed<D>[];
  if (take !== undefined && take * 4 < docs.length) kept = firstOf(docs, take, keyed, compare);
  else kept = docs.map(keyed).sort(compare); // Array#sort is stable: ties stay in the order found.
  return kept.slice(skip, take).map((entry) => entry.doc);
}

/** The `take` first documents in order, kept sorted as the scan goes (a later tie goes after). */
function firstOf<D>(
  docs: readonly D[],
  take: number,
  keyed: (doc: D) => Keyed<D>,
  compare: (a: Keyed<D>, b: Keyed<D>) => number,
): Keyed<D>[] {
  const kept: Keyed<D>[] = [];
  for (const doc of docs) {
    const entry = keyed(doc);
    if (kept.length === take && compare(entry, kept[take - 1]) >= 0) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compare(entry, kept[middle]) < 0) high = middle;
      else low = middle + 1;
    }
    kept.splice(low, 0, entry);
    if (kept.length > take) kept.pop();
  }
  return kept;
}
