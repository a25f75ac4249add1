/**
 * JSON with object keys sorted, so that equal values always give the same text (and hash). A
 * file (a decoded `_files` entry: a Buffer, or its pages, a non-empty array of Buffers; JSON has
 * neither) is written as its base64 string, which is what the client sent for it: a body hashes
 * the same whether its files arrived as text or were decoded on the way in. The hash is fed
 * piece by piece, so a file's base64 text is never one string.
 */
import { createHash, type Hash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonical(value, pieces, undefined);
  return pieces.join('');
}

/** SHA-256 (hex) of canonicalJson(value), without building that text whole when it holds files. */
export function canonicalJsonSha256(value: unknown): string {
  const hash = createHash('sha256');
  const pieces: string[] = [];
  writeCanonical(value, pieces, hash);
  hash.update(pieces.join(''));
  return hash.digest('hex');
}

/** Bytes of a Buffer encoded at a time: a multiple of 3, so the pieces join into its base64. */
const BASE64_SLICE = 3 * 64 * 1024;

/** Appends the text to `pieces`; with `hash`, a Buffer's text goes into it (after the pieces before it). */
function writeCanonical(value: unknown, pieces: string[], hash: Hash | undefined): void {
  if (isFile(value)) {
    // Pages (base64-file.ts) hold multiples of 3 bytes but the last: their base64 texts join.
    const pages = Buffer.isBuffer(value) ? [value] : value;
    if (!hash) {
      pieces.push(`"${pages.map((page) => page.toString('base64')).join('')}"`);
      return;
    }
    pieces.push('"');
    hash.update(pieces.join(''));
    pieces.length = 0;
    for (const page of pages) {
      for (let at = 0; at < page.length; at += BASE64_SLICE)
        hash.update(page.toString('base64', at, Math.min(at + BASE64_SLICE, page.length)));
    }
    pieces.push('"');
  } else if (Array.isArray(value)) {
    pieces.push('[');
    value.forEach((item, i) => {
      if (i > 0) pieces.push(',');
      writeCanonical(item, pieces, hash);
    });
    pieces.push(']');
  } else if (value && typeof value === 'object') {
    pieces.push('{');
    Object.keys(value)
      .sort()
      .forEach((key, i) => {
        pieces.push(i > 0 ? `,${JSON.stringify(key)}:` : `${JSON.stringify(key)}:`);
        writeCanonical((value as Record<string, unknown>)[key], pieces, hash);
      });
    pieces.push('}');
  } else {
    pieces.push(JSON.stringify(value) ?? 'null');
  }
}

function isFile(value: unknown): value is Buffer | Buffer[] {
  return (
    Buffer.isBuffer(value) || (Array.isArray(value) && value.length > 0 && value.every((item) => Buffer.isBuffer(item)))
  );
}
