/** SPEC 6.2, D23: the notification's headers; the signature is HMAC-SHA256 of the raw body. */
import { hmacSha256Hex } from '@opco-proxy/core';

export function notificationHeaders(secret: string, rawBody: string, event: string, deliveryId: string, sentAt: Date): Record<string, string> {
  return {
    'content-type': 'application/json',
    'svc-signature': hmacSha256Hex(secret, rawBody),
    'svc-event': event,
    'svc-delivery-id': deliveryId,
    'svc-timestamp': sentAt.toISOString(),
  };
}
