/**
 * Pages of a collection, newest first (or oldest first), by a date field and `_id` (delivery logs, the operator
 * lists): the cursor is the last record of the previous page, so records written between two
 * pages neither shift nor repeat what follows. Any Store can serve it (an $or of two range
 * filters), and the cursor is opaque base64url text.
 */
import { createError } from '../errors/errors.js';
import type { Collection, Doc, Filter } from '../ports/store.js';

export interface PageRequest {
  /** At most this many records (default 50). */
  limit?: number;
  /** The `next` of the previous page. */
  cursor?: string;
}

export interface Page<T> {
  records: T[];
  /** Cursor of the next page; absent on the last one. */
  next?: string;
}

export function newestFirst<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  field: keyof T & string,
  request: PageRequest = {},
): Promise<Page<T>> {
  return pageOf(collection, filter, field, request, -1);
}

/** The same pages in the other order (an export reads a period from its start). */
export function oldestFirst<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  field: keyof T & string,
  request: PageRequest = {},
): Promise<Page<T>> {
  return pageOf(collection, filter, field, request, 1);
}

async function pageOf<T extends Doc>(
  collection: Collection<T>,
  filter: Filter,
  field: keyof T & string,
  request: PageRequest,
  order: 1 | -1,
): Promise<Page<T>> {
  const limit = request.limit ?? 50;
  const clauses: Filter[] = [filter];
  const after = request.cursor ? decodeCursor(request.cursor) : undefined;
  const past = order === -1 ? '$lt' : '$gt';
  if (after)
    clauses.push({ $or: [{ [field]: { [past]: after.at } }, { [field]: after.at, _id: { [past]: after.id } }] });
  const records = await collection.find(clauses.length === 1 ? filter : { $and: clauses }, {
    sort: { [field]: order, _id: order },
    limit: limit + 1,
  });
  const last = records[limit - 1];
  return records.length > limit && last
    ? { records: records.slice(0, limit), next: encodeCursor(last[field] as Date, last._id) }
    : { records };
}

function encodeCursor(at: Date, id: string): string {
  return Buffer.from(JSON.stringify([at.getTime(), id])).toString('base64url');
}

/** A cursor that does not decode is a client's mistake: 400, as the schema's pattern let it through. */
function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof at === 'number' && typeof id === 'string') return { at: new Date(at), id };
  } catch {
    // falls through
  }
  throw createError('VALIDATION_ERROR', 'cursor: not a cursor of this list', { errors: ['cursor: Invalid value'] });
}
