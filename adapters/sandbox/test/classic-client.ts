/** What a `classic` adapter does in front of the sandbox, reduced to the calls the tests need. */
import type { Sandbox } from '../src/server/index.js';
import { API_KEY } from './upstream-client.js';
import { tokenRequest } from './token-styles.js';

/** Token of the classic default auth: HTTP Basic at /auth/token, answer `{token, validity_seconds}`. */
export async function classicHeaders(sandbox: Sandbox, apiKey = API_KEY): Promise<Record<string, string>> {
  const res = await fetch(sandbox.tokenUrl, tokenRequest('basic'));
  if (res.status !== 200) throw new Error(`token request answered ${res.status}`);
  const { token } = (await res.json()) as { token: string };
  return { authorization: `Bearer ${token}`, 'x-api-key': apiKey };
}

/** `YYYY-MM-DD` → `DD/MM/YYYY`, written out here so tests do not use the code they check. */
export const fr = (iso: string) => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
