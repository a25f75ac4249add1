/**
 * The port's update operators (`$set $unset $inc $push` on dotted paths) applied to a stored
 * document of the embedded store. A stored document is never changed in place: the result is a
 * new document that copies the objects on the updated paths and shares the rest, so a reader
 * holding the previous version, or an update undone on a unique key, sees it as it was.
 */
import { isPlainObject } from './filter-matching.js';

export type Modifier = Partial<Record<'$set' | '$unset' | '$inc' | '$push', Record<string, unknown>>>;

type Node = Record<string, unknown>;

export function applyUpdate<D extends { _id: string }>(doc: D, modifier: Modifier): D {
  for (const fields of [modifier.$set, modifier.$push]) {
    for (const [path, value] of Object.entries(fields ?? {})) {
      if (path.split('.').some((part) => part.startsWith('$')))
        throw new TypeError(`cannot update ${path}: a field name begins with $`);
      assertFieldNames(isPlainObject(value) && Array.isArray(value.$each) ? value.$each : value);
    }
  }
  const root: Node = { ...doc };
  for (const [path, value] of Object.entries(modifier.$set ?? {})) setAt(root, path, () => copyValue(value));
  for (const path of Object.keys(modifier.$unset ?? {})) unsetAt(root, path);
  for (const [path, by] of Object.entries(modifier.$inc ?? {})) {
    if (typeof by !== 'number') throw new TypeError(`$inc on ${path} needs a number`);
    setAt(root, path, (current) => {
      if (current === undefined) return by;
      if (typeof current !== 'number') throw new TypeError(`$inc on ${path}: the field is not a number`);
      return current + by;
    });
  }
  for (const [path, value] of Object.entries(modifier.$push ?? {})) {
    const added: unknown[] = isPlainObject(value) && Array.isArray(value.$each) ? (value.$each as unknown[]) : [value];
    setAt(root, path, (current) => {
      if (current !== undefined && !Array.isArray(current))
        throw new TypeError(`$push on ${path}: the field is not an array`);
      return [...((current as unknown[] | undefined) ?? []), ...added.map(copyValue)];
    });
  }
  if (root._id !== doc._id) throw new TypeError("an update cannot change a document's _id");
  return root as D;
}

/** Sets the value at a dotted path from the current one, copying each object on the way. */
function setAt(root: Node, path: string, next: (current: unknown) => unknown): void {
  const parts = path.split('.');
  let node = root;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    if (child !== undefined && (child === null || typeof child !== 'object' || child instanceof Date)) {
      throw new TypeError(`cannot update ${path}: ${part} is not an object`);
    }
    const copy = (Array.isArray(child) ? [...(child as unknown[])] : { ...(child as Node | undefined) }) as Node;
    node[part] = copy;
    node = copy;
  }
  const last = parts[parts.length - 1];
  node[last] = next(node[last]);
}

function unsetAt(root: Node, path: string): void {
  const parts = path.split('.');
  let node = root;
  for (const part of parts.slice(0, -1)) {
    const child = node[part];
    if (child === null || typeof child !== 'object' || child instanceof Date) return;
    const copy = (Array.isArray(child) ? [...(child as unknown[])] : { ...child }) as Node;
    node[part] = copy;
    node = copy;
  }
  delete node[parts[parts.length - 1]];
}

/**
 * A copy of an update's value, so that the caller changing it later changes nothing stored.
 * Undefined fields are dropped and undefined array elements become null, as in a datafile.
 */
export function copyValue<V>(value: V): V {
  if (value instanceof Date) return new Date(value.getTime()) as V;
  if (value instanceof Uint8Array)
    return (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)) as V;
  if (Array.isArray(value)) return value.map((v: unknown) => (v === undefined ? null : copyValue(v))) as V;
  if (value !== null && typeof value === 'object') {
    const copy: Node = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) copy[k] = copyValue(v);
    return copy as V;
  }
  return value;
}

/**
 * Field names a document may not hold: a leading `$` (an operator, or the datafile's own
 * `$$date` and `$$bytes`) or a `.` (a path). Bytes and Dates are leaves, not walked.
 */
export function assertFieldNames(doc: unknown): void {
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || node instanceof Date || ArrayBuffer.isView(node)) continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith('$') || key.includes('.'))
        throw new TypeError(`field name ${JSON.stringify(key)} cannot be stored: it begins with $ or holds a dot`);
      stack.push(value);
    }
  }
}
