/**
 * Pipeline step 6: the one upstream client. Adds the headers of SPEC 1.1 (bearer token,
 * forwarded X-API-KEY, publisher identification), speaks JSON or multipart as the profile
 * says, refreshes the token and retries once on 401 (D10), and maps every failure onto the
 * error table (SPEC 7, D5, D8).
 */
import got, { type OptionsOfTextResponseBody, type Response } from 'got';
import { createError, type ServiceError } from './errors.js';
import type { CallContext, UpstreamAnswer } from './call-context.js';
import type { TokenManager } from './token-manager.js';

export interface Publisher {
  editeur: string;
  logiciel: string;
  version: string;
}

export interface UpstreamClientOptions {
  tokens: TokenManager;
  publisher: Publisher;
  timeoutMs: number;
}

export class UpstreamClient {
  constructor(private readonly options: UpstreamClientOptions) {}

  async call(ctx: CallContext): Promise<UpstreamAnswer> {
    let token = await this.options.tokens.token(ctx.opco);
    let response = await this.send(ctx, token);
    if (response.statusCode === 401) {
      this.options.tokens.invalidate(ctx.opco, token);
      token = await this.options.tokens.token(ctx.opco);
      response = await this.send(ctx, token);
    }
    return toAnswer(response);
  }

  private async send(ctx: CallContext, token: string): Promise<Response<string>> {
    const { publisher, timeoutMs } = this.options;
    const url = ctx.opco.baseUrl.replace(/\/+$/, '') + ctx.routeProfile.upstream;
    const options: OptionsOfTextResponseBody = {
      method: ctx.method,
      headers: {
        ...ctx.upstreamHeaders,
        authorization: `Bearer ${token}`,
        'x-api-key': ctx.tenant.apiKey,
        editeur: publisher.editeur,
        logiciel: publisher.logiciel,
        version: publisher.version,
        accept: 'application/json',
      },
      timeout: { request: timeoutMs },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: false,
      responseType: 'text',
    };
    if (ctx.method === 'GET') options.searchParams = ctx.query;
    else if (ctx.routeProfile.multipart) options.body = multipartBody(ctx.routeProfile.multipart, ctx.body, ctx.files);
    else options.json = ctx.body;
    try {
      return await got(url, options);
    } catch (err) {
      throw networkError(ctx, err);
    }
  }
}

/** JSON metadata in the profile's part, then one `fichier` part per uploaded file, named by role. */
function multipartBody(metadataPart: string, metadata: unknown, files: Record<string, Buffer> = {}): FormData {
  const form = new FormData();
  form.append(metadataPart, new Blob([JSON.stringify(metadata ?? {})], { type: 'application/json' }));
  for (const [role, content] of Object.entries(files)) {
    const pdf = content.subarray(0, 4).toString('latin1') === '%PDF';
    form.append('fichier', new Blob([content], { type: pdf ? 'application/pdf' : 'application/octet-stream' }), `${role}${pdf ? '.pdf' : '.bin'}`);
  }
  return form;
}

function networkError(ctx: CallContext, err: unknown): ServiceError {
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError') {
    return createError('TIMEOUT', `upstream ${ctx.opco.id} did not answer within ${ctx.route} time limit`, { cause: err });
  }
  return createError('NETWORK_ERROR', `network failure towards upstream ${ctx.opco.id}`, { cause: err });
}

function toAnswer(response: Response<string>): UpstreamAnswer {
  const status = response.statusCode;
  const parsed = parseBody(response.body);
  if (status >= 200 && status < 300) {
    if (!parsed.ok) throw createError('UPSTREAM_INVALID_RESPONSE', 'upstream answer is not JSON');
    return { status, body: parsed.value, headers: response.headers };
  }
  const upstream = parsed.ok ? parsed.value : response.body.slice(0, 2000);
  if (status === 401 || status === 403) {
    throw createError('HTTP_ERROR', 'the upstream body refused the authentication', { upstream });
  }
  if (status === 404) throw createError('NOT_FOUND', 'not found at the upstream body', { upstream });
  const retryAfter = response.headers['retry-after'];
  throw createError('UPSTREAM_ERROR', `upstream answered ${status}`, {
    status: status >= 400 && status <= 599 ? status : 502,
    upstream,
    headers: typeof retryAfter === 'string' ? { 'Retry-After': retryAfter } : undefined,
  });
}

function parseBody(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
