/** What the proxy does in front of the sandbox, reduced to the calls the tests need. */
import type { Sandbox } from '../src/server/index.js';

export const API_KEY = 'cfa-key-0123456789';

export async function fetchToken(sandbox: Sandbox, secret = 'client-secret'): Promise<string> {
  const res = await fetch(sandbox.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'proxy', client_secret: secret }),
  });
  if (res.status !== 200) throw new Error(`token request answered ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export function authHeaders(token: string, apiKey = API_KEY): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'x-api-key': apiKey };
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  // Tests assert on arbitrary upstream shapes; typing each one would add nothing.
  body: any;
}

export async function getJson(
  sandbox: Sandbox,
  pathAndQuery: string,
  headers: Record<string, string>,
): Promise<JsonAnswer> {
  const res = await fetch(`${sandbox.url}${pathAndQuery}`, { headers });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

export async function postJson(
  sandbox: Sandbox,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<JsonAnswer> {
  const res = await fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

export async function postForm(
  sandbox: Sandbox,
  path: string,
  headers: Record<string, string>,
  form: FormData,
): Promise<JsonAnswer> {
  const res = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers, body: form });
  return { status: res.status, headers: res.headers, body: await res.json() };
}
