/**
 * The Store port's rules on what may be stored (ports/store.ts), checked by every implementation
 * before the backend sees a document or an update, without recursion: a bound on nesting
 * (MAX_DOCUMENT_DEPTH), and bytes only in documents as they are inserted.
 */
import { MAX_DOCUMENT_DEPTH } from '../ports/store.js';
import { jsonDepth } from '../limits/json-limits.js';

export function assertStorable(value: unknown, what = 'a document'): void {
  if (jsonDepth(value, MAX_DOCUMENT_DEPTH) > MAX_DOCUMENT_DEPTH) {
    throw new TypeError(
      `${what} nested deeper than ${MAX_DOCUMENT_DEPTH} levels cannot be stored; store such values as JSON text`,
    );
  }
}

/** An update: as a document, and carrying no bytes (they are written once, by an insert). */
export function assertStorableUpdate(update: unknown): void {
  assertStorable(update, 'an update');
  if (holdsBytes(update))
    throw new TypeError('an update cannot carry bytes: store them with the document when it is inserted');
}

/** Whether bytes (a Buffer or another typed array) are anywhere in the value. */
export function holdsBytes(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || node instanceof Date) continue;
    if (ArrayBuffer.isView(node)) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
  }
  return false;
}
