/**
 * Reading a request body (D7, P2): JSON only, decompressed when the client says so (gzip, deflate,
 * br), at most `limitBytes` once decompressed, and within its bounds (issue 38, body-bounds.ts:
 * MAX_BODY_DEPTH levels, `bounds` values, fields per object, items per array and bytes of JSON
 * outside the files, and `_files` named by roles only), counted as it streams in and refused at
 * the first byte past one, the rest left unread. Every failure is the client's, with an answer
 * that names it: 415 for a Content-Type or Content-Encoding the service does not take, 413 over
 * the limit or over the bytes of JSON, 400 for JSON that does not parse or is past a bound of
 * its structure, or a body that is not the compressed data its Content-Encoding announces.
 *
 * For an operation that takes `_files`, the files are decoded as the body arrives (file-cutter.ts)
 * and each stands in the parsed body as a short string that validates as the real one would
 * (`AAAA`, or `!` for one that is not base64, or '' for an empty one): the schema judges the body
 * without the file text ever being a string. `withFiles()`, once the body is valid, puts each
 * file's bytes in its place, as the pages they were decoded into (a Buffer[], FileContent), or
 * answers 413 for a file over the limit (D7).
 */
import { parse as parseJson } from '@hapi/bourne';
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import typeIs from 'type-is';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { createError, isServiceError, type ServiceError } from '../errors/errors.js';
import { clientRequestError } from './client-errors.js';
import { answeredTimeout } from './connection-limits.js';
import { DEFAULT_BODY_BOUNDS, type BodyBounds } from '../limits/json-limits.js';
import { releaseChunk } from './resizable-buffer.js';
import { BodyBoundsScanner, FILE_ROLES } from './body-bounds.js';
import { FileCutter, PLACEHOLDER, type CutFile } from './file-cutter.js';

const JSON_TYPES = ['application/json', '+json'];

export interface BodyLimits {
  limitBytes: number;
  /** The operation takes `_files`, each at most this many bytes decoded; absent: it takes none. */
  fileBytes?: number;
  /** Values, fields per object, items per array and JSON bytes (the config's `limits` by these names); absent: the defaults. */
  bounds?: BodyBounds;
}

const ROLES: ReadonlySet<string> = new Set(FILE_ROLES);

export interface JsonBody {
  /** The parsed body, files standing in as short strings; undefined when the request has none. */
  value: unknown;
  /** The body with each file's bytes in place; 413 PAYLOAD_TOO_LARGE for a file over the limit. */
  withFiles(): unknown;
  /**
   * Gives back the memory of every file at once (resizable-buffer.ts), when the request is done:
   * what its handler did not consume is otherwise left to V8's next collection.
   */
  discard(): void;
}

/** What stands in for a file, so that the schema's `byte` format and minLength judge it as they would the file. */
const STAND_INS: Record<CutFile['outcome'], string> = { valid: 'AAAA', empty: '', invalid: '!' };

/** Whether the request carries a body at all (a length, or chunked transfer). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return Boolean(req.headers['transfer-encoding']) || (length !== undefined && length !== '' && length !== '0');
}

/** The request's body, from the middleware chain (a Koa context's `req`) or the early path alike. */
export async function readJsonBody(req: IncomingMessage, limits: BodyLimits): Promise<JsonBody> {
  if (!hasBody(req)) return { value: undefined, withFiles: () => undefined, discard: () => {} };
  if (!typeIs(req, JSON_TYPES)) {
    const type = req.headers['content-type'] || 'none';
    throw createError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, not ${type}`, {
      errors: [`Content-Type: must be application/json (got ${type})`],
    });
  }
  const encoding = req.headers['content-encoding'] || 'identity';
  const cutter = limits.fileBytes === undefined ? undefined : new FileCutter(limits.fileBytes);
  const scanner = new BodyBoundsScanner(limits.bounds ?? DEFAULT_BODY_BOUNDS, cutter ? ROLES : undefined);
  let value: unknown;
  try {
    let text: Buffer;
    try {
      const length =
        encoding === 'identity' && req.headers['content-length'] ? Number(req.headers['content-length']) : undefined;
      text = await readBytes(req, encoding, limits.limitBytes, length, scanner, cutter);
    } catch (err) {
      // Cut by the slow-body watch: the client was answered 408, and the access line says so.
      throw answeredTimeout(req.socket)
        ? clientRequestError('ERR_HTTP_REQUEST_TIMEOUT')
        : bodyError(err, encoding, limits.limitBytes);
    }
    // Within the bounds, depth included: the scanner counted them; nothing walks the value again.
    value = parse(text, cutter?.invalidJson === true);
  } catch (err) {
    cutter?.discard();
    throw err;
  }
  const placed = cutter ? standIn(value, cutter.files) : [];
  return {
    value,
    withFiles() {
      const files = (value as { _files?: Record<string, unknown> })._files!;
      for (const [role, file] of placed) {
        if (file.size > limits.fileBytes!) {
          throw createError(
            'PAYLOAD_TOO_LARGE',
            `_files.${role}: file of ${file.size} bytes is over the ${limits.fileBytes}-byte limit`,
          );
        }
        files[role] = file.content;
      }
      return value;
    },
    discard: () => cutter?.discard(),
  };
}

/**
 * As co-body read bodies before: text as UTF-8 (a leading BOM dropped), any JSON value, and a
 * `__proto__` key refused (@hapi/bourne). The text holds no file, so it is small.
 */
function parse(text: Buffer, invalidInFiles: boolean): unknown {
  let value: unknown;
  try {
    if (invalidInFiles) throw new SyntaxError('a file of the body breaks JSON string rules');
    let json = text.toString('utf8');
    if (json.charCodeAt(0) === 0xfeff) json = json.slice(1);
    value = json ? parseJson(json, { protoAction: 'error' }) : json;
  } catch (err) {
    const message = 'body: invalid JSON';
    throw createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
  }
  return value;
}

/** Puts each file's stand-in where JSON.parse placed its placeholder: under `_files`, by role. */
function standIn(value: unknown, cut: CutFile[]): Array<[string, CutFile]> {
  const files = isObject(value) ? value._files : undefined;
  if (!isObject(files)) return [];
  const placed: Array<[string, CutFile]> = [];
  for (const [role, held] of Object.entries(files)) {
    if (typeof held !== 'string' || !held.startsWith(PLACEHOLDER)) continue;
    const file = cut[Number(held.slice(PLACEHOLDER.length))];
    if (!file) continue;
    files[role] = STAND_INS[file.outcome];
    placed.push([role, file]);
  }
  return placed;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads the request, decompressed, into `cutter` (or whole), each chunk counted by `scanner`
 * first: at most `limit` bytes, exactly `length` when it was announced, within the bounds. Stops
 * reading at the first problem and leaves the rest of the request unread, as raw-body did; never
 * destroys the request, so the client gets the answer.
 */
function readBytes(
  req: IncomingMessage,
  encoding: string,
  limit: number,
  length: number | undefined,
  scanner: BodyBoundsScanner,
  cutter: FileCutter | undefined,
): Promise<Buffer> {
  if (length !== undefined && length > limit)
    return Promise.reject(Object.assign(new Error('body over the limit'), { type: 'entity.too.large' }));
  const source = decompressed(req, encoding);
  const chunks: Buffer[] = [];
  let received = 0;
  return new Promise((resolve, reject) => {
    const finish = (err?: Error) => {
      source.off('data', onData).off('end', onEnd).off('error', finish);
      req.off('aborted', onAborted).off('error', finish);
      if (err === undefined) return resolve(cutter ? cutter.end() : joined(chunks, received, source === req));
      if (source !== req) {
        req.unpipe(source as Transform);
        // A decompressor stopped mid-way may still report what it had queued: nobody listens now.
        source.on('error', () => {}).destroy();
      }
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit)
        return finish(Object.assign(new Error('body over the limit'), { type: 'entity.too.large' }));
      // Before the cutter: a `_files` name that is not a role is refused before its file is decoded.
      try {
        scanner.push(chunk);
      } catch (err) {
        return finish(err as Error);
      }
      // The HTTP parser's chunks are the body's only copies: one the cutter did not keep a view
      // of is given back at once (a decompressor's output is left alone: it may share memory).
      if (cutter) {
        if (!cutter.push(chunk) && source === req) releaseChunk(chunk);
      } else chunks.push(chunk);
    };
    const onEnd = () =>
      finish(
        length !== undefined && received !== length
          ? Object.assign(new Error('body length differs'), { type: 'request.size.invalid' })
          : undefined,
      );
    const onAborted = () => finish(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
    source.on('data', onData).on('end', onEnd).on('error', finish);
    req.on('aborted', onAborted).on('error', finish);
  });
}

/** The chunks as one buffer; when they were copied into it, the parser's own are given back. */
function joined(chunks: Buffer[], length: number, fromParser: boolean): Buffer {
  if (chunks.length === 1) return chunks[0];
  const text = Buffer.concat(chunks, length);
  if (fromParser) for (const chunk of chunks) releaseChunk(chunk);
  return text;
}

/** The body as sent (identity) or its decompression; 415 for an encoding the service does not take. */
function decompressed(req: IncomingMessage, encoding: string): IncomingMessage | Transform {
  if (encoding === 'identity') return req;
  if (encoding === 'gzip' || encoding === 'deflate') return req.pipe(createUnzip());
  if (encoding === 'br') return req.pipe(createBrotliDecompress());
  throw Object.assign(new Error(`Unsupported Content-Encoding: ${encoding}`), { status: 415 });
}

function bodyError(err: unknown, encoding: string, limitBytes: number): ServiceError {
  if (isServiceError(err)) return err;
  const { status, type, code } = err as { status?: number; type?: string; code?: string };
  if (status === 413 || type === 'entity.too.large') {
    return createError('PAYLOAD_TOO_LARGE', `request body is over the ${limitBytes}-byte limit`);
  }
  if (status === 415) {
    return createError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Encoding ${encoding} is not supported (gzip, deflate, br or none)`,
      {
        errors: [`Content-Encoding: ${encoding} is not supported`],
      },
    );
  }
  if (
    typeof code === 'string' &&
    (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__'))
  ) {
    const message = `body: not valid ${encoding} data, as its Content-Encoding says`;
    return createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
  }
  if (type === 'request.aborted' || type === 'request.size.invalid' || code === 'ECONNRESET') {
    const message = 'body: ended before its announced length';
    return createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
  }
  throw err;
}
