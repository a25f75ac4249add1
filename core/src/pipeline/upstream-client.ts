/**
 * Pipeline step 6: the one upstream client. Sends the headers of SPEC 1.1 (the profile's
 * authentication, the forwarded X-API-KEY, publisher identification, then the admission lease's
 * and the hooks' headers, which may override), speaks JSON or multipart as the profile says,
 * retries once on 401 when the authentication says a refresh may help (D10), and maps every
 * failure onto the error table (SPEC 7, D5, D8), the profile's error rules first. Answers are
 * bounded: over `maxAnswerBytes` or MAX_ANSWER_DEPTH levels deep they are unusable.
 *
 * It speaks HTTP through undici, one keep-alive pool per upstream origin: got cost about four
 * times undici's CPU per call, and still three times once tuned (keep-alive agent, no hooks),
 * measured side by side by bench/uncached-get.mjs (bench/RESULTS.md).
 */
import { randomHex } from '../crypto/crypto.js';
import { Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { createError, isServiceError, type ServiceError } from '../errors/errors.js';
import {
  KEPT_TEXT_CHARS,
  MAX_ANSWER_DEPTH,
  MAX_KEPT_ERROR_BYTES,
  jsonDepth,
  truncatedText,
} from '../limits/json-limits.js';
import type { CallContext, FileContent, UpstreamAnswer } from './call-context.js';
import { CallDeadline } from './call-deadline.js';
import type { AuthTransport, UpstreamAuth } from '../upstream-auth/auth-strategy.js';
import type { UpstreamErrorRule } from '../profile/profile.js';

export interface Publisher {
  editeur: string;
  logiciel: string;
  version: string;
}

export interface UpstreamClientOptions {
  publisher: Publisher;
  timeoutMs: number;
  /** Answers larger than this are unusable (D5). */
  maxAnswerBytes: number;
}

/** The upstream refused the call's credentials and fresh ones may do: call once more (D10). */
export class AuthRefreshNeeded extends Error {
  constructor() {
    super('the upstream refused the credentials; refreshing them');
    this.name = 'AuthRefreshNeeded';
  }
}

export class UpstreamClient {
  private readonly auths = new Map<string, UpstreamAuth>();

  constructor(private readonly options: UpstreamClientOptions) {}

  /** The opco's authentication, set up by the kernel from its profile's strategy. */
  authenticate(opcoId: string, auth: UpstreamAuth): void {
    this.auths.set(opcoId, auth);
  }

  /**
   * Keep-alive connections to every upstream, reused by every call; closed with the kernel.
   * undici is loaded at the first call: it is a tenth of an idle process's memory (issue 40),
   * and an `api` process answering from its cache, or a worker with nothing to do, needs none.
   */
  private agent: Promise<Agent> | undefined;
  private closed = false;

  private dispatcher(): Promise<Agent> {
    // Closed, a call fails as a network error instead of opening a pool the kernel never closes.
    if (this.closed) return Promise.reject(new Error('the upstream client is closed'));
    this.agent ??= import('undici').then(({ Agent }) => new Agent({ connections: 128, keepAliveTimeout: 30_000 }));
    return this.agent;
  }

  /**
   * How token requests and the like go out: the same client, same limits — a token endpoint's
   * answer over `maxAnswerBytes` is refused (code TOO_LARGE) like any other upstream answer's.
   */
  readonly transport: AuthTransport = async (request) => {
    const { maxAnswerBytes } = this.options;
    const deadline = new CallDeadline(request.timeoutMs);
    let text: string | undefined;
    let status: number;
    try {
      const response = await (
        await this.dispatcher()
      ).request({
        origin: new URL(request.url).origin,
        path: pathOf(request.url),
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: deadline,
      });
      status = response.statusCode;
      if (Number(response.headers['content-length']) > maxAnswerBytes) response.body.destroy();
      else text = (await readCapped(response.body, maxAnswerBytes))?.toString('utf8');
    } catch (err) {
      throw Object.assign(new Error((err as Error).message), {
        code: (err as { name?: string }).name === 'TimeoutError' ? 'TIMEOUT' : 'NETWORK',
      });
    } finally {
      deadline.disarm();
    }
    if (text === undefined) {
      throw Object.assign(new Error(`the token endpoint answered more than ${maxAnswerBytes} bytes`), {
        code: 'TOO_LARGE',
      });
    }
    return { status, text };
  };

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await (await this.agent)?.close();
  }

  /**
   * One upstream call. A 401 that the authentication can cure (`refused` says so) throws
   * AuthRefreshNeeded when `refreshAllowed`: the pipeline then makes a second call, admitted on
   * its own (D10: refreshed once and retried once).
   */
  async call(ctx: CallContext, refreshAllowed = true): Promise<UpstreamAnswer> {
    const auth = this.auths.get(ctx.opco.id);
    if (!auth) throw new Error(`no upstream authentication for ${ctx.opco.id}`);
    const authHeaders = await auth.headers();
    const response = await this.send(ctx, authHeaders);
    if (response.statusCode === 401 && refreshAllowed && auth.refused(authHeaders)) throw new AuthRefreshNeeded();
    return toAnswer(ctx, response);
  }

  private async send(ctx: CallContext, authHeaders: Record<string, string>): Promise<RawAnswer> {
    const { publisher, timeoutMs } = this.options;
    const url = routeUrl(ctx.opco.baseUrl, ctx.routeProfile.upstream);
    let path = url.pathname + url.search;
    if (ctx.method === 'GET') {
      const query = Object.entries(ctx.query);
      if (query.length > 0) {
        // Serialised as URL.searchParams would be, after any query the route's URL has itself.
        const params = new URLSearchParams(url.search);
        for (const [name, value] of query) params.append(name, value);
        path = `${url.pathname}?${params.toString()}`;
      }
    }
    const headers: Record<string, string> = {
      'x-api-key': ctx.tenant.apiKey,
      editeur: publisher.editeur,
      logiciel: publisher.logiciel,
      version: publisher.version,
      accept: 'application/json',
      // The caller's request id (a job's, for its steps), so both sides' logs meet.
      ...(ctx.requestId && { 'x-request-id': ctx.requestId }),
      ...authHeaders,
      ...lowerCased(ctx.leaseHeaders ?? {}),
      ...lowerCased(ctx.upstreamHeaders),
    };
    let body: Dispatcher.DispatchOptions['body'];
    if (ctx.method === 'GET') body = undefined;
    else if (ctx.routeProfile.multipart) {
      const form = multipartBody(ctx.routeProfile.multipart, ctx.body, ctx.files);
      body = Readable.from(form.parts, { objectMode: false });
      headers['content-type'] = form.type;
      headers['content-length'] = String(form.length);
    } else {
      body = JSON.stringify(ctx.body);
      headers['content-type'] = 'application/json';
    }
    const signal = new CallDeadline(timeoutMs);
    try {
      return await this.exchange(ctx, { origin: url.origin, path, headers, body, signal });
    } finally {
      signal.disarm();
    }
  }

  /** The request, then its answer read whole within `maxAnswerBytes`; the deadline covers both. */
  private async exchange(
    ctx: CallContext,
    request: Pick<Dispatcher.RequestOptions, 'origin' | 'path' | 'headers' | 'body' | 'signal'>,
  ): Promise<RawAnswer> {
    const { maxAnswerBytes } = this.options;
    let response: Dispatcher.ResponseData;
    try {
      response = await (await this.dispatcher()).request({ ...request, method: ctx.method });
    } catch (err) {
      throw networkError(ctx, err);
    }
    const declared = Number(response.headers['content-length']);
    if (declared > maxAnswerBytes) {
      response.body.destroy();
      throw tooLarge(ctx, maxAnswerBytes);
    }
    let body: Buffer | null;
    try {
      body = await readCapped(response.body, maxAnswerBytes);
    } catch (err) {
      throw networkError(ctx, err);
    }
    if (!body) throw tooLarge(ctx, maxAnswerBytes);
    return { statusCode: response.statusCode, headers: response.headers, body };
  }
}

/**
 * An answer's bytes, or null once they pass `max` (the rest is not read). Read by its events: an
 * async iterator over the body cost a few percent of an uncached read (bench/RESULTS.md, issue 40).
 */
function readCapped(body: Dispatcher.ResponseData['body'], max: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let ended = false;
    body.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received <= max) chunks.push(chunk);
      else if (!ended) {
        ended = true;
        body.destroy();
        resolve(null);
      }
    });
    body.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
    });
    body.once('error', reject);
    // Closed without an end or an error of its own: the answer was cut off.
    body.once('close', () => ended || reject(new Error('the upstream answer was cut off')));
  });
}

/** What the upstream sent back, before it is read as an answer or an error. */
interface RawAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function tooLarge(ctx: CallContext, maxAnswerBytes: number): ServiceError {
  return createError('UPSTREAM_INVALID_RESPONSE', `upstream ${ctx.opco.id} answered more than ${maxAnswerBytes} bytes`);
}

/**
 * A route's upstream URL without the call's query, parsed once: the opco's base URL and the
 * profile's path are fixed by the configuration, and parsing them again cost every call more
 * than its query (bench/RESULTS.md, issue 40). Bounded as the other memories of keys are (kernels
 * made one after another in a process, tests and embedders, each bring their own base URLs).
 */
const routeUrls = new Map<string, URL>();
const ROUTE_URLS_MAX = 1024;

function routeUrl(baseUrl: string, upstream: string): URL {
  const text = baseUrl.replace(/\/+$/, '') + upstream;
  let url = routeUrls.get(text);
  if (url === undefined) {
    url = new URL(text);
    if (routeUrls.size >= ROUTE_URLS_MAX) routeUrls.clear();
    routeUrls.set(text, url);
  }
  return url;
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/**
 * JSON metadata in the profile's part, then one `fichier` part per uploaded file, named by role:
 * multipart/form-data written as FormData would (RFC 7578), but with each file's own buffer as
 * a part, where a FormData Blob would copy the file first.
 */
function multipartBody(
  metadataPart: string,
  metadata: unknown,
  files: Record<string, FileContent> = {},
): { type: string; parts: Buffer[]; length: number } {
  const boundary = `----opco-proxy-${randomHex(12)}`;
  // As FormData escapes names: no quote or line break can end the header early.
  const escape = (text: string) => text.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
  const head = (name: string, filename: string, type: string) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"; filename="${escape(filename)}"\r\nContent-Type: ${type}\r\n\r\n`,
    );
  const crlf = Buffer.from('\r\n');
  const parts: Buffer[] = [
    head(metadataPart, 'blob', 'application/json'),
    Buffer.from(JSON.stringify(metadata ?? {})),
    crlf,
  ];
  for (const [role, content] of Object.entries(files)) {
    const pieces = Buffer.isBuffer(content) ? [content] : content;
    // Pieces are only short at the end: a first piece under 4 bytes is the whole file.
    const pdf = (pieces[0] ?? crlf).subarray(0, 4).toString('latin1') === '%PDF';
    parts.push(
      head('fichier', `${role}${pdf ? '.pdf' : '.bin'}`, pdf ? 'application/pdf' : 'application/octet-stream'),
      ...pieces,
      crlf,
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    parts,
    length: parts.reduce((sum, part) => sum + part.length, 0),
  };
}

function networkError(ctx: CallContext, err: unknown): ServiceError {
  if (isServiceError(err)) return err;
  // The call's deadline (CallDeadline) aborts with a TimeoutError, whether waiting for headers or for the body.
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError') {
    return createError('TIMEOUT', `upstream ${ctx.opco.id} did not answer ${ctx.route} within the time limit`, {
      cause: err,
    });
  }
  return createError('NETWORK_ERROR', `network failure towards upstream ${ctx.opco.id}`, { cause: err });
}

function toAnswer(ctx: CallContext, response: RawAnswer): UpstreamAnswer {
  const status = response.statusCode;
  const text = response.body.toString('utf8');
  if (status >= 200 && status < 300) {
    const parsed = parseJson(text);
    if (!parsed.ok)
      throw createError('UPSTREAM_INVALID_RESPONSE', 'upstream answer is not JSON', { upstream: truncatedText(text) });
    if (jsonDepth(parsed.value, MAX_ANSWER_DEPTH) > MAX_ANSWER_DEPTH) {
      throw createError(
        'UPSTREAM_INVALID_RESPONSE',
        `upstream answer is nested deeper than ${MAX_ANSWER_DEPTH} levels`,
        { upstream: truncatedText(text) },
      );
    }
    return { status, body: parsed.value, headers: response.headers };
  }
  const retryAfter = response.headers['retry-after'];
  throw upstreamError(ctx, status, text, Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
}

/** An upstream error answer as the table says (SPEC 7, D8), after the profile's own rules. */
function upstreamError(ctx: CallContext, status: number, text: string, retryAfter: string | undefined): ServiceError {
  const upstream = keptErrorBody(text);
  const rule = matchingRule(ctx.opco.profile.errors, ctx, status, text);
  if (rule) {
    return createError(rule.code, rule.description ?? `upstream ${ctx.opco.id} answered ${status}`, {
      upstream,
      upstreamStatus: status,
      ...(rule.code === 'VALIDATION_ERROR'
        ? { errors: [`upstream: ${rule.description ?? `refused with ${status}`}`] }
        : {}),
      ...(rule.code === 'UPSTREAM_ERROR' ? { status } : {}),
    });
  }
  const refusal = ctx.opco.profile.keyRefusal;
  if (refusal && status === (refusal.status ?? 403) && refusal.body.test(text)) {
    return createError('HTTP_ERROR', 'the upstream body does not know this X-API-KEY', {
      upstream,
      upstreamStatus: status,
      keyRefused: true,
    });
  }
  if (status === 401 || status === 403)
    return createError('HTTP_ERROR', 'the upstream body refused the authentication', {
      upstream,
      upstreamStatus: status,
    });
  if (status === 404)
    return createError('NOT_FOUND', 'not found at the upstream body', { upstream, upstreamStatus: status });
  const seconds = typeof retryAfter === 'string' && /^\d{1,6}$/.test(retryAfter.trim()) ? retryAfter.trim() : undefined;
  return createError('UPSTREAM_ERROR', `upstream answered ${status}`, {
    status: status >= 400 && status <= 599 ? status : 502,
    upstream,
    upstreamStatus: status,
    // Every 429 tells the client when to come back, even when the upstream's did not (P2).
    headers: seconds ? { 'Retry-After': seconds } : status === 429 ? { 'Retry-After': '1' } : undefined,
  });
}

function matchingRule(
  rules: UpstreamErrorRule[] | undefined,
  ctx: CallContext,
  status: number,
  text: string,
): UpstreamErrorRule | undefined {
  return rules?.find(
    (rule) =>
      rule.status === status &&
      (!rule.routes || rule.routes.includes(ctx.route)) &&
      (!rule.body || rule.body.test(text)),
  );
}

/** The upstream's error body for `upstream` (SPEC 7): its JSON when small and shallow, else its text cut short. */
function keptErrorBody(text: string): unknown {
  if (Buffer.byteLength(text) <= MAX_KEPT_ERROR_BYTES) {
    const parsed = parseJson(text);
    if (parsed.ok && jsonDepth(parsed.value, 16) <= 16) return parsed.value;
  }
  return text.length > KEPT_TEXT_CHARS ? truncatedText(text) : text;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
