/**
 * What a receiver gets, by event type (SPEC 6, D22, D23, P10): an example notification of each
 * event and the headers it arrives with, signed with an example secret, shown in /doc as the
 * callbacks of POST /webhooks. The webhooks plugin's tests check these headers are the ones its
 * delivery sends for the same body, secret, id and time, and that they verify with the Standard
 * Webhooks library.
 */
import { createHash, createHmac } from 'node:crypto';
import type { EventType, WebhookNotification } from './generated/types.js';

/** A webhook secret, and the same 32 bytes in the Standard Webhooks form. */
export const EXAMPLE_SECRET = '7c1f0e9a5b3d2c4e6f8a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4';
export const EXAMPLE_SIGNING_SECRET = 'whsec_fB8Omls9LE5vigscLT5PWmt8jZ4PGis8TV5vcIGSo7Q=';

const JOB_ID = '3b241101-e2bb-4255-8caf-4136c566a962';
const SYNC_ID = '9f8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d';
const SENT_AT = '2026-11-20T09:14:03.120Z';
const at = (timestamp: string, opcoId = 'sandbox') => ({ opcoId, timestamp });

const data: Record<EventType, Record<string, unknown>> = {
  'dossier.etat_changed': {
    numeroInterne: 'DOS-2026-000123',
    numeroExterne: 'EXT-88412',
    numeroDeca: '07520260900012',
    previousEtat: 'TRANSMIS',
    etat: 'ENGAGE',
  },
  'dossier.updated': {
    numeroInterne: 'DOS-2026-000123',
    dossier: {
      numeroInterne: 'DOS-2026-000123',
      etat: 'ENGAGE',
      cerfa: { apprenti: { nom: 'Durand', prenom: 'Léa' } },
    },
  },
  'facture.etat_changed': {
    numeroInterneFacture: 'F-000457',
    referenceFactureCFA: 'FAC-2026-0142',
    previousEtat: 'TRANSMISE',
    etat: 'PAYEE',
    montantFacture: 2450.5,
    referenceVirement: 'VIR-2026-11-0093',
    dateReglement: '2026-11-02',
  },
  'job.completed': {
    jobId: JOB_ID,
    type: 'post-dossier',
    status: 'completed',
    result: { numeroInterne: 'DOS-2026-000123' },
    completedAt: '2026-11-20T09:14:03.100Z',
  },
  'job.failed': {
    jobId: JOB_ID,
    type: 'post-facture',
    status: 'failed',
    retries: 3,
    error: {
      code: 'UPSTREAM_ERROR',
      message: 'upstream answered 422',
      step: 1,
      upstream: { message: 'numeroDossier inconnu' },
    },
  },
  'job.progress': { jobId: JOB_ID, type: 'post-dossier', step: 1, totalSteps: 2, name: 'dossier', status: 'completed' },
  'sync.started': { syncId: SYNC_ID, total: 1240 },
  'sync.batch': {
    syncId: SYNC_ID,
    batch: 12,
    totalBatches: 25,
    dossiers: [
      { numeroInterne: 'DOS-2026-000123', etat: 'ENGAGE', cerfa: { apprenti: { nom: 'Durand', prenom: 'Léa' } } },
    ],
  },
  'sync.completed': { syncId: SYNC_ID, total: 1240, durationMs: 1312000 },
  'sync.failed': { syncId: SYNC_ID, error: 'batch 7 failed after 4 attempt(s): upstream answered 503' },
  'sync.cancelled': { syncId: SYNC_ID },
  'webhook.test': {
    webhookId: 'b7e6d5c4-3a2b-4c1d-8e9f-0a1b2c3d4e5f',
    message: 'a test notification, sent because it was asked for',
  },
  'webhook.disabled': {
    webhookId: '0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f',
    callbackUrl: 'https://old-erp.cfa-exemple.fr/hooks',
    disabledAt: SENT_AT,
    reason: 'every delivery failed since 2026-11-15T09:10:00.000Z',
  },
};

/** Events that concern no upstream body carry an empty opcoId. */
const NO_OPCO: readonly EventType[] = ['webhook.test', 'webhook.disabled'];

export const notificationExamples = Object.fromEntries(
  (Object.keys(data) as EventType[]).map((event) => [
    event,
    { event, ...at('2026-11-20T09:14:03.105Z', NO_OPCO.includes(event) ? '' : 'sandbox'), data: data[event] },
  ]),
) as Record<EventType, WebhookNotification>;

/** The delivery headers a receiver can check, with their example value for an event. */
export interface NotificationHeaderExample {
  name: string;
  required: boolean;
  description: string;
  pattern?: string;
  example: string;
}

/**
 * The headers the example notification of `event` is sent with. The body is the notification
 * serialised as the service serialises it (JSON.stringify, fields in this order), and the
 * signatures are computed here, as the spec defines them, so a reader can check their own code
 * against the page.
 */
export function notificationHeaderExamples(event: EventType): NotificationHeaderExample[] {
  const body = JSON.stringify(notificationExamples[event]);
  const deliveryId = createHash('sha256').update(`example\n${event}`).digest('hex').slice(0, 32);
  const seconds = String(Math.floor(Date.parse(SENT_AT) / 1000));
  const key = Buffer.from(EXAMPLE_SECRET, 'hex');
  const standard = `v1,${createHmac('sha256', key).update(`${deliveryId}.${seconds}.${body}`).digest('base64')}`;
  return [
    { name: 'Svc-Event', required: true, description: 'The event type, as in the body.', example: event },
    {
      name: 'Svc-Signature',
      required: true,
      pattern: '^[0-9a-f]{64}$',
      example: createHmac('sha256', EXAMPLE_SECRET).update(body).digest('hex'),
      description:
        'HMAC-SHA256 of the raw body with the webhook secret (its 64 hex characters as the key), lowercase hex (SPEC 6.2).',
    },
    {
      name: 'Svc-Signature-Previous',
      required: false,
      pattern: '^[0-9a-f]{64}$',
      example: createHmac('sha256', 'e4'.repeat(32)).update(body).digest('hex'),
      description:
        'The same with the secret before the last rotation, for 24 hours after POST /webhooks/{id}/rotate-secret.',
    },
    {
      name: 'Svc-Delivery-Id',
      required: true,
      example: deliveryId,
      description: 'The same on every attempt and resend of this delivery: de-duplicate on it (D23).',
    },
    { name: 'Svc-Timestamp', required: true, example: SENT_AT, description: 'When this attempt was sent, ISO 8601.' },
    {
      name: 'webhook-id',
      required: true,
      example: deliveryId,
      description: 'Standard Webhooks: the delivery id (Svc-Delivery-Id).',
    },
    {
      name: 'webhook-timestamp',
      required: true,
      pattern: '^[0-9]+$',
      example: seconds,
      description: 'Standard Webhooks: when this attempt was sent, in Unix seconds; refuse old ones.',
    },
    {
      name: 'webhook-signature',
      required: true,
      pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$',
      example: standard,
      description:
        'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body` keyed with the 32 bytes of the secret ' +
        '(signingSecret, whsec_…); during a rotation a second signature follows, space-separated.',
    },
  ];
}
