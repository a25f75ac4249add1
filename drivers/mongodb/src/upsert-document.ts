/**
 * The document an upsert inserts, built in the client: `{...equality fields of the filter,
 * ...$setOnInsert, ...$set}`, then `$inc`, `$push`, `$unset` applied to it, as the port says.
 *
 * Only the document-lock path needs it (document-locks.ts): there an upsert must be a plain
 * insert, atomic against the _id index, never an update that could touch an existing document
 * without holding its lock. MongoDB itself builds the same document for server-side upserts.
 */
import { randomUUID } from 'node:crypto';
import { type Filter, type Update } from '@opco-proxy/core';
import { equalityFields, isPlainObject } from '@opco-proxy/core/driver-kit';

export function upsertDocument(filter: Filter, update: Update): Record<string, unknown> & { _id: string } {
  const seed = equalityFields(filter);
  const _id = seed._id ?? update.$setOnInsert?._id ?? update.$set?._id ?? randomUUID();
  if (typeof _id !== 'string') throw new TypeError('an upserted document needs a string _id');
  const doc: Record<string, unknown> = { _id };
  for (const fields of [seed, update.$setOnInsert, update.$set]) {
    for (const [path, value] of Object.entries(fields ?? {})) if (path !== '_id') setPath(doc, path, value);
  }
  for (const [path, by] of Object.entries(update.$inc ?? {}))
    setPath(doc, path, ((getPath(doc, path) as number | undefined) ?? 0) + by);
  for (const [path, value] of Object.entries(update.$push ?? {})) {
    const current = (getPath(doc, path) as unknown[] | undefined) ?? [];
    const each = isPlainObject(value) && Array.isArray(value.$each) ? (value.$each as unknown[]) : [value];
    setPath(doc, path, [...current, ...each]);
  }
  for (const path of Object.keys(update.$unset ?? {})) unsetPath(doc, path);
  return doc as Record<string, unknown> & { _id: string };
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  const last = parts.pop()!;
  let target = doc;
  for (const part of parts) {
    if (!isPlainObject(target[part])) target[part] = {};
    target = target[part] as Record<string, unknown>;
  }
  if (value !== undefined) target[last] = value;
}

function getPath(doc: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((value, part) => (isPlainObject(value) ? value[part] : undefined), doc);
}

function unsetPath(doc: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  const last = parts.pop()!;
  const parent = parts.length > 0 ? getPath(doc, parts.join('.')) : doc;
  if (isPlainObject(parent)) delete parent[last];
}
