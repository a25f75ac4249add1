/**
 * Reading a request body (D7, P2): JSON only, decompressed when the client says so (gzip, deflate,
 * br), at most `limitBytes` once decompressed, at most MAX_BODY_DEPTH levels deep. Every failure is
 * the client's, with an answer that names it: 415 for a Content-Type or Content-Encoding the
 * service does not take, 413 over the limit, 400 for JSON that does not parse or nests too deep,
 * or a body that is not the compressed data its Content-Encoding announces. co-body (on raw-body
 * and inflation) does the reading.
 */
import coBody from 'co-body';
import type Koa from 'koa';
import { createError, isServiceError, type ServiceError } from '../errors.js';
import { MAX_BODY_DEPTH, jsonDepth } from '../json-limits.js';

const JSON_TYPES = ['application/json', '+json'];

/** Whether the request carries a body at all (a length, or chunked transfer). */
function hasBody(ctx: Koa.Context): boolean {
  const length = ctx.get('content-length');
  return ctx.get('transfer-encoding') !== '' || (length !== '' && length !== '0');
}

/** The parsed JSON body, or undefined when the request has none. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!hasBody(ctx)) return undefined;
  if (!ctx.is(JSON_TYPES)) {
    const type = ctx.get('content-type') || 'none';
    throw createError('UNSUPPORTED_MEDIA_TYPE', `Content-Type must be application/json, not ${type}`, {
      errors: [`Content-Type: must be application/json (got ${type})`],
    });
  }
  let body: unknown;
  try {
    body = await coBody.json(ctx, { limit: limitBytes, strict: false, encoding: 'utf8' });
  } catch (err) {
    throw bodyError(err, ctx.get('content-encoding') || 'identity', limitBytes);
  }
  if (jsonDepth(body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
    const message = `body: nested deeper than ${MAX_BODY_DEPTH} levels`;
    throw createError('VALIDATION_ERROR', message, { errors: [message] });
  }
  return body;
}

function bodyError(err: unknown, encoding: string, limitBytes: number): ServiceError {
  if (isServiceError(err)) return err;
  const { status, type, code } = err as { status?: number; type?: string; code?: string };
  if (status === 413 || type === 'entity.too.large') {
    return createError('PAYLOAD_TOO_LARGE', `request body is over the ${limitBytes}-byte limit`);
  }
  if (status === 415) {
    return createError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding} is not supported (gzip, deflate, br or none)`, {
      errors: [`Content-Encoding: ${encoding} is not supported`],
    });
  }
  if (typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR_BROTLI') || code.startsWith('ERR__'))) {
    const message = `body: not valid ${encoding} data, as its Content-Encoding says`;
    return createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
  }
  if (type === 'request.aborted' || type === 'request.size.invalid') {
    const message = 'body: ended before its announced length';
    return createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
  }
  const message = type === 'encoding.unsupported' ? 'body: charset not supported (utf-8 only)' : 'body: invalid JSON';
  return createError('VALIDATION_ERROR', message, { errors: [message], cause: err });
}
