/**
 * Reading a client-credentials token request (RFC 6749 2.3.1, 4.4.2) and telling how it was
 * made: `basic` (id and secret in `Authorization: Basic`, the grant in a form body), `form`
 * (everything in an `application/x-www-form-urlencoded` body) or `json` (everything in a JSON
 * body `{grant_type, client_id, client_secret}`); `none` when it is none of these.
 */
import type { IncomingMessage } from 'node:http';
import { mediaType } from './exchange.js';
import type { TokenRequestRecord } from './types.js';

export interface TokenRequest {
  style: TokenRequestRecord['style'];
  grantType?: string;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
}

/** RFC 6749 2.3.1: Basic credentials are form-urlencoded before base64. */
function decodeBasicPart(part: string): string {
  return decodeURIComponent(part.replace(/\+/g, ' '));
}

function formFields(body: Buffer): Record<string, string | undefined> {
  const form = new URLSearchParams(body.toString('utf8'));
  return {
    grant_type: form.get('grant_type') ?? undefined,
    client_id: form.get('client_id') ?? undefined,
    client_secret: form.get('client_secret') ?? undefined,
    scope: form.get('scope') ?? undefined,
  };
}

/** Only string members count; a body that is not a JSON object carries nothing. */
function jsonFields(body: Buffer): Record<string, string | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  const fields: Record<string, string | undefined> = {};
  for (const name of ['grant_type', 'client_id', 'client_secret', 'scope']) {
    const value = (parsed as Record<string, unknown>)[name];
    if (typeof value === 'string') fields[name] = value;
  }
  return fields;
}

export function readTokenRequest(req: IncomingMessage, body: Buffer): TokenRequest {
  const type = mediaType(req);
  const isForm = type === 'application/x-www-form-urlencoded';
  const isJson = type === 'application/json' || type.endsWith('+json');
  const basic = /^Basic\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const form = isForm ? formFields(body) : {};
    const found: TokenRequest = { style: 'basic', grantType: form['grant_type'], scope: form['scope'] };
    const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) {
      try {
        found.clientId = decodeBasicPart(decoded.slice(0, colon));
        found.clientSecret = decodeBasicPart(decoded.slice(colon + 1));
      } catch {
        // Malformed percent-encoding: leave the credentials unset, which answers invalid_client.
      }
    }
    return found;
  }
  if (!isForm && !isJson) return { style: 'none' };
  const fields = isForm ? formFields(body) : jsonFields(body);
  return {
    style: isForm ? 'form' : 'json',
    grantType: fields['grant_type'],
    clientId: fields['client_id'],
    clientSecret: fields['client_secret'],
    scope: fields['scope'],
  };
}
