/**
 * The notification's headers (SPEC 6.2, D23, P10): `Svc-Signature` exactly as the spec defines
 * it (lowercase hex HMAC-SHA256 of the raw body with the webhook secret), and beside it the
 * Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`: `v1,` +
 * base64 HMAC of `id.timestamp.body` with the 32 bytes the secret encodes), which sign the
 * delivery id and time too, so a captured notification cannot be replayed later as new. While a
 * rotated secret is still valid, it signs beside the new one.
 */
import { SERVICE_VERSION, hmacSha256Base64, hmacSha256Hex } from '@opco-proxy/core';

export interface SigningKeys {
  /** 64 hex characters. */
  current: string;
  /** The secret before the last rotation, while it is still valid (24 h). */
  previous?: string;
}

export const USER_AGENT = `opco-proxy/${SERVICE_VERSION}`;

/** The same secret in the Standard Webhooks form their libraries take. */
export function signingSecret(secret: string): string {
  return `whsec_${Buffer.from(secret, 'hex').toString('base64')}`;
}

function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${hmacSha256Base64(Buffer.from(secret, 'hex'), `${id}.${timestamp}.${body}`)}`;
}

export function notificationHeaders(
  keys: SigningKeys,
  rawBody: string,
  event: string,
  deliveryId: string,
  sentAt: Date,
): Record<string, string> {
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  const secrets = keys.previous ? [keys.current, keys.previous] : [keys.current];
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'svc-signature': hmacSha256Hex(keys.current, rawBody),
    'svc-event': event,
    'svc-delivery-id': deliveryId,
    'svc-timestamp': sentAt.toISOString(),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => standardSignature(secret, deliveryId, timestamp, rawBody)).join(' '),
  };
  if (keys.previous) headers['svc-signature-previous'] = hmacSha256Hex(keys.previous, rawBody);
  return headers;
}
