/**
 * The Store port's bound on nesting (ports/store.ts MAX_DOCUMENT_DEPTH), checked by every
 * implementation before the backend sees a document or an update, without recursion.
 */
import { MAX_DOCUMENT_DEPTH } from '../ports/store.js';
import { jsonDepth } from '../json-limits.js';

export function assertStorable(value: unknown, what = 'a document'): void {
  if (jsonDepth(value, MAX_DOCUMENT_DEPTH) > MAX_DOCUMENT_DEPTH) {
    throw new TypeError(`${what} nested deeper than ${MAX_DOCUMENT_DEPTH} levels cannot be stored; store such values as JSON text`);
  }
}
