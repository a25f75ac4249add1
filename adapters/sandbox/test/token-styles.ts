/** The three ways a client can ask a token endpoint for a client-credentials token. */
export type Style = 'form' | 'basic' | 'json';

export function tokenRequest(
  style: Style,
  clientId = 'proxy',
  secret = 's3cret',
  grantType = 'client_credentials',
): RequestInit {
  if (style === 'form') {
    return {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grantType, client_id: clientId, client_secret: secret }),
    };
  }
  if (style === 'basic') {
    return {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: grantType }),
    };
  }
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: grantType, client_id: clientId, client_secret: secret }),
  };
}

export async function askToken(url: string, style: Style, secret?: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, tokenRequest(style, 'proxy', secret));
  return { status: res.status, body: await res.json() };
}
