/**
 * Every HTTP route of the service (SPEC 4, D21, D27, plus /ready and /metrics) in one typed
 * table: the kernel and plugins can mount and validate from it, and the OpenAPI document at
 * /doc is built from it, so the served description and the served routes come from one list.
 */
import { schemaIds, type SchemaId } from './catalog.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export type RouteTag =
  'system' | 'opco' | 'dossiers' | 'factures' | 'conventions' | 'certificats' | 'documents' | 'jobs' | 'sync' | 'webhooks' | 'pollers';

/** Statuses answered with the error body of SPEC 7 (codes: see ERROR_STATUS_CODES in openapi.ts). */
export type ErrorStatus = 400 | 403 | 404 | 409 | 413 | 429 | 501 | 502 | 503 | 504;

export interface RouteResponse {
  status: number;
  description: string;
  /** JSON body schema; absent with text/plain or a free-form JSON document. */
  schema?: SchemaId;
  contentType?: 'application/json' | 'text/plain';
}

export interface ServiceRoute {
  method: HttpMethod;
  /** OpenAPI template, `/{opcoId}/dossiers/etats`; `routerPath()` gives the @koa/router form. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: RouteTag;
  /** Section of the spec (or decision) that defines it. */
  source: string;
  /** X-API-KEY needed (SPEC 4.0.1). */
  apiKey: boolean;
  query?: SchemaId;
  body?: SchemaId;
  responses: RouteResponse[];
  errors: ErrorStatus[];
  /** Asynchronous POST (SPEC 4.0.4): takes an Idempotency-Key header, answers 202 or 200 duplicate. */
  async?: boolean;
  /** Job type created (SPEC 4.13). */
  jobType?: string;
  /** Key of the route in an adapter profile (core's RouteKey); absent profile route = 501. */
  profileRoute?: string;
  /** Feature plugin that mounts it; absent means the kernel. */
  plugin?: 'jobs' | 'sync' | 'webhooks';
}

const json = (status: number, description: string, schema: SchemaId): RouteResponse => ({ status, description, schema });

/** Upstream GET routes: an upstream may fail, time out, or answer unusable data (D5). */
const UPSTREAM_GET: ErrorStatus[] = [403, 404, 429, 501, 502, 504];
const ASYNC_POST: ErrorStatus[] = [400, 403, 404, 413, 429, 501, 503];

function asyncPost(resource: string, section: string, body: SchemaId, summary: string): ServiceRoute {
  const name = resource.charAt(0).toUpperCase() + resource.slice(1, -1);
  return {
    method: 'POST',
    path: `/{opcoId}/${resource}`,
    operationId: `post${name}`,
    summary,
    tag: resource as RouteTag,
    source: section,
    apiKey: true,
    body,
    responses: [
      json(202, 'Accepted: the job is pending.', schemaIds.asyncAccepted),
      json(200, 'Idempotency-Key already seen for this tenant: the existing job (status duplicate).', schemaIds.asyncAccepted),
    ],
    errors: ASYNC_POST,
    async: true,
    jobType: `post-${resource.slice(0, -1)}`,
    profileRoute: `POST /${resource}`,
    plugin: 'jobs',
  };
}

export const routeTable: readonly ServiceRoute[] = [
  // System
  {
    method: 'GET',
    path: '/health',
    operationId: 'getHealth',
    summary: 'The process answers',
    tag: 'system',
    source: '4.1',
    apiKey: false,
    responses: [json(200, 'Alive.', schemaIds.health)],
    errors: [],
  },
  {
    method: 'GET',
    path: '/ready',
    operationId: 'getReady',
    summary: 'The store and queue answer',
    tag: 'system',
    source: 'D6',
    apiKey: false,
    responses: [json(200, 'Ready to serve.', schemaIds.ready)],
    errors: [503],
  },
  {
    method: 'GET',
    path: '/doc',
    operationId: 'getOpenApi',
    summary: 'This OpenAPI 3.0 document',
    tag: 'system',
    source: '4.2',
    apiKey: false,
    responses: [{ status: 200, description: 'OpenAPI 3.0.3 document.', contentType: 'application/json' }],
    errors: [],
  },
  {
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics for operators',
    tag: 'system',
    source: 'D6',
    apiKey: false,
    responses: [{ status: 200, description: 'Prometheus text exposition format.', contentType: 'text/plain' }],
    errors: [],
  },

  // Upstream body: status and key information
  {
    method: 'GET',
    path: '/{opcoId}/status',
    operationId: 'getOpcoStatus',
    summary: 'Health of an upstream body',
    tag: 'opco',
    source: '4.3',
    apiKey: true,
    responses: [json(200, 'Health verdict (D13).', schemaIds.statusResponse)],
    errors: [403, 404, 429, 501],
    profileRoute: 'GET /status',
  },
  {
    method: 'GET',
    path: '/{opcoId}/cfakeyinfo',
    operationId: 'getCfaKeyInfo',
    summary: 'Validity of the key assigned to a SIREN',
    tag: 'opco',
    source: '4.4',
    apiKey: true,
    query: schemaIds.cfakeyinfoQuery,
    responses: [json(200, 'Key information.', schemaIds.cfakeyinfoResponse)],
    errors: [400, ...UPSTREAM_GET],
    profileRoute: 'GET /cfakeyinfo',
  },

  // Dossiers
  {
    method: 'GET',
    path: '/{opcoId}/dossiers',
    operationId: 'getDossier',
    summary: 'One dossier',
    tag: 'dossiers',
    source: '4.5',
    apiKey: true,
    description: 'Exclusive modes: numeroInterne alone, or numeroExterne with numeroDeca. Mixed, partial or empty queries give 400.',
    query: schemaIds.dossierQuery,
    responses: [json(200, 'The dossier.', schemaIds.dossier)],
    errors: [400, ...UPSTREAM_GET],
    profileRoute: 'GET /dossiers',
  },
  {
    method: 'GET',
    path: '/{opcoId}/dossiers/etats',
    operationId: 'listDossierEtats',
    summary: 'A page of dossier states',
    tag: 'dossiers',
    source: '4.6',
    apiKey: true,
    query: schemaIds.etatsQuery,
    responses: [json(200, 'A page of states.', schemaIds.etatsPage)],
    errors: [400, ...UPSTREAM_GET],
    profileRoute: 'GET /dossiers/etats',
  },
  {
    method: 'GET',
    path: '/{opcoId}/dossiers/liste',
    operationId: 'listDossiers',
    summary: 'Dossiers by internal numbers (at most 50)',
    tag: 'dossiers',
    source: '4.7',
    apiKey: true,
    query: schemaIds.listeQuery,
    responses: [json(200, 'The dossiers found and the numbers not found.', schemaIds.liste)],
    errors: [400, ...UPSTREAM_GET],
    profileRoute: 'GET /dossiers/liste',
  },
  asyncPost('dossiers', '4.8', schemaIds.dossierBody, 'Submit a dossier (job post-dossier; composite with _files, D16)'),

  // Factures
  asyncPost('factures', '4.9', schemaIds.factureBody, 'Submit an invoice (job post-facture)'),
  {
    method: 'GET',
    path: '/{opcoId}/factures/etats',
    operationId: 'listFactureEtats',
    summary: 'A page of invoice states',
    tag: 'factures',
    source: '4.10',
    apiKey: true,
    query: schemaIds.facturesEtatsQuery,
    responses: [json(200, 'A page of invoice states.', schemaIds.facturesEtatsPage)],
    errors: [400, ...UPSTREAM_GET],
    profileRoute: 'GET /factures/etats',
  },

  // Conventions, certificats, documents
  asyncPost('conventions', '4.11', schemaIds.conventionBody, 'Submit a training agreement (job post-convention)'),
  asyncPost('certificats', '4.12', schemaIds.certificatBody, 'Submit a completion certificate (job post-certificat)'),
  asyncPost('documents', '4.12b', schemaIds.documentBody, 'Submit a document (job post-document)'),

  // Jobs
  {
    method: 'GET',
    path: '/{opcoId}/jobs/{jobId}',
    operationId: 'getJob',
    summary: 'State and result of a job',
    tag: 'jobs',
    source: '4.13',
    apiKey: true,
    description:
      'Visible only to the tenant that created it. Poll after 2 s, then every 5 s for a minute, then every 30 s; or use webhooks.',
    responses: [json(200, 'The job.', schemaIds.job)],
    errors: [403, 404, 429],
    plugin: 'jobs',
  },

  // Sync (SPEC 4.14, D19)
  {
    method: 'POST',
    path: '/sync/dossiers',
    operationId: 'startSync',
    summary: 'Start a bulk sync of all dossiers',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    body: schemaIds.syncBody,
    responses: [json(202, 'Accepted: the sync is pending.', schemaIds.syncAccepted)],
    errors: [400, 403, 404, 409, 429, 501, 503],
    plugin: 'sync',
  },
  {
    method: 'GET',
    path: '/sync/{syncId}',
    operationId: 'getSync',
    summary: 'Progress of a sync',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    responses: [json(200, 'The sync.', schemaIds.sync)],
    errors: [403, 404, 429],
    plugin: 'sync',
  },
  {
    method: 'DELETE',
    path: '/sync/{syncId}',
    operationId: 'cancelSync',
    summary: 'Cancel a sync',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    responses: [json(200, 'Cancelled, or already finished (current state and a message).', schemaIds.syncCancellation)],
    errors: [403, 404, 429],
    plugin: 'sync',
  },

  // Webhooks (SPEC 4.15, D9)
  {
    method: 'POST',
    path: '/webhooks',
    operationId: 'createWebhook',
    summary: 'Subscribe to events',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    body: schemaIds.webhookCreateBody,
    responses: [json(201, 'Created; the only answer that shows secret.', schemaIds.webhook)],
    errors: [400, 403, 413, 429],
    plugin: 'webhooks',
  },
  {
    method: 'GET',
    path: '/webhooks',
    operationId: 'listWebhooks',
    summary: "The tenant's webhooks",
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    responses: [json(200, 'Webhooks, without secret.', schemaIds.webhookList)],
    errors: [403, 429],
    plugin: 'webhooks',
  },
  {
    method: 'PATCH',
    path: '/webhooks/{id}',
    operationId: 'updateWebhook',
    summary: 'Change a webhook',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    body: schemaIds.webhookUpdateBody,
    responses: [json(200, 'The webhook after the change.', schemaIds.webhook)],
    errors: [400, 403, 404, 413, 429],
    plugin: 'webhooks',
  },
  {
    method: 'DELETE',
    path: '/webhooks/{id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    responses: [json(200, 'Deleted.', schemaIds.deleted)],
    errors: [403, 404, 429],
    plugin: 'webhooks',
  },
  {
    method: 'GET',
    path: '/webhooks/{id}/logs',
    operationId: 'listWebhookDeliveries',
    summary: 'Delivery attempts of a webhook',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    responses: [json(200, 'Delivery records.', schemaIds.deliveryList)],
    errors: [403, 404, 429],
    plugin: 'webhooks',
  },

  // Pollers (D21)
  {
    method: 'GET',
    path: '/pollers',
    operationId: 'listPollers',
    summary: "The tenant's pollers",
    tag: 'pollers',
    source: 'D21',
    apiKey: true,
    responses: [json(200, 'Pollers.', schemaIds.pollerList)],
    errors: [403, 429],
    plugin: 'sync',
  },
  {
    method: 'DELETE',
    path: '/pollers/{opcoId}',
    operationId: 'deletePoller',
    summary: 'Stop the poller of an upstream body',
    tag: 'pollers',
    source: 'D21',
    apiKey: true,
    responses: [json(200, 'Stopped.', schemaIds.deleted)],
    errors: [403, 404, 429],
    plugin: 'sync',
  },
];

/** `/{opcoId}/jobs/{jobId}` -> `/:opcoId/jobs/:jobId` (@koa/router). */
export function routerPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** The route of a method and OpenAPI path, e.g. findRoute('GET', '/{opcoId}/dossiers'). */
export function findRoute(method: HttpMethod, path: string): ServiceRoute | undefined {
  return routeTable.find((route) => route.method === method && route.path === path);
}
