/**
 * The route manifest: every HTTP operation of the service (SPEC 4, the decisions, /ready and
 * /metrics) keyed by operationId. Core mounts a plugin's handler by operation and takes from here
 * the method, path, authentication, query and body schemas and the answers; /doc is built from
 * the operations actually mounted. Handler inputs and outputs are typed from the generated types
 * through `schema` ids, so a route, its validation, its types and its documentation are one entry.
 */
import { schemaIds as ids, type SchemaId } from './catalog.js';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export type RouteTag =
  | 'system'
  | 'opco'
  | 'dossiers'
  | 'factures'
  | 'conventions'
  | 'certificats'
  | 'documents'
  | 'jobs'
  | 'sync'
  | 'webhooks'
  | 'pollers'
  | 'audit'
  | 'operator';

/** Statuses answered with the error body of SPEC 7 (what each stands for: openapi.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 501 | 502 | 503 | 504;

/** What an answer is written in; JSON unless a route says otherwise. */
export type MediaType = 'application/json' | 'text/plain' | 'text/html' | 'text/javascript' | 'text/css';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; absent with another media type or a free-form JSON document. */
  schema?: SchemaId;
  /** One media type, or the ones a route may answer in (the reference page's assets). */
  contentType?: MediaType | readonly MediaType[];
}

export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI template, `/{opcoId}/dossiers/etats`; `routerPath()` gives the @koa/router form. */
  path: string;
  summary: string;
  description?: string;
  tag: RouteTag;
  /** Section of the spec (or decision) that defines it. */
  source: string;
  /** X-API-KEY needed (SPEC 4.0.1). */
  apiKey: boolean;
  /** For operators, across tenants: `Authorization: Bearer <OPCO_PROXY_ADMIN_KEY>` (P9). */
  operator?: boolean;
  query?: SchemaId;
  body?: SchemaId;
  responses: { readonly [status: number]: ResponseSpec };
  errors: readonly ErrorStatus[];
  /** Asynchronous POST (SPEC 4.0.4): takes an Idempotency-Key header, answers 202 or 200 duplicate. */
  async?: boolean;
  /** Job type created (SPEC 4.13). */
  jobType?: string;
  /** Key of the route in an adapter profile (core's RouteKey); a route absent from the profile is 501. */
  profileRoute?: string;
  /**
   * D32: the request writes an audit record, through the one mechanism of the operation router:
   * `change` for every state-changing request of a tenant or an operator, `personal-read` for a
   * read of personal data (recorded only with `audit.reads`). `id` names what an `{id}` path
   * parameter or an `id` field of the answer is (a webhook's id under /webhooks).
   */
  audit?: { kind: 'change' | 'personal-read'; id?: 'webhookId' };
  /**
   * Schema the transformed upstream answer is checked against (pipeline step 8): its `required`
   * fields are what makes the answer usable, any other mismatch is drift (D14).
   */
  upstreamAnswer?: SchemaId;
}

const CHANGE = { kind: 'change' } as const;
const WEBHOOK_CHANGE = { kind: 'change', id: 'webhookId' } as const;
const PERSONAL_READ = { kind: 'personal-read' } as const;

const json = <S extends SchemaId>(description: string, schema: S) => ({ description, schema }) as const;

/** What every route behind X-API-KEY may answer: no or refused key, the tenant's own rate (D6). */
const KEYED = [403, 429] as const;
/** A body is read: invalid, too large, not JSON. */
const BODY = [400, 413, 415] as const;
/**
 * A synchronous upstream read: unknown opco, unsupported route, the upstream's own errors passed
 * through with their status (UPSTREAM_ERROR 400, 404, 422, 5xx), TIMEOUT, NETWORK_ERROR, unusable
 * answers, an exhausted upstream budget.
 */
const UPSTREAM_READ = [400, ...KEYED, 404, 422, 500, 501, 502, 503, 504] as const;
/** Read or write of the Store: unreachable gives 503 UNAVAILABLE. */
const STORED = [...KEYED, 404, 503] as const;
/**
 * Behind the operator key (P9): missing or wrong 401, operator routes off 403, 429 while the
 * client's address backs off after wrong keys (P13); they read the Store.
 */
const OPERATOR = [401, 403, 429, 503] as const;
/** A filtered, paged operator list. */
const OPERATOR_LIST = [400, ...OPERATOR] as const;

function operatorRead<P extends string, R extends SchemaId>(path: P, summary: string, answer: R, description: string) {
  return {
    method: 'GET',
    path,
    summary,
    description,
    tag: 'operator',
    source: 'P9',
    apiKey: false,
    operator: true,
    responses: { 200: json(description, answer) },
    errors: OPERATOR,
  } as const;
}

function consoleFile<P extends string, T extends 'text/html' | 'text/javascript' | 'text/css'>(
  path: P,
  contentType: T,
  summary: string,
) {
  return {
    method: 'GET',
    path,
    summary,
    tag: 'operator',
    source: 'P9',
    apiKey: false,
    description: 'Needs no key: the page asks for the operator key and sends it with its calls to /admin.',
    responses: { 200: { description: summary, contentType } },
    errors: [],
  } as const;
}

function asyncPost<R extends string, B extends SchemaId>(resource: R, section: string, body: B, summary: string) {
  return {
    method: 'POST',
    path: `/{opcoId}/${resource}`,
    summary,
    tag: resource,
    source: section,
    apiKey: true,
    body,
    responses: {
      202: json('Accepted: the job is pending.', ids.asyncAccepted),
      200: json(
        'Idempotency-Key already seen for this tenant: the existing job (status duplicate).',
        ids.asyncAccepted,
      ),
    },
    errors: [...BODY, ...KEYED, 404, 501, 503],
    async: true,
    audit: CHANGE,
    jobType: `post-${resource.slice(0, -1)}`,
    profileRoute: `POST /${resource}`,
  } as const;
}

export const operations = {
  // System
  getHealth: {
    method: 'GET',
    path: '/health',
    summary: 'The process answers',
    tag: 'system',
    source: '4.1',
    apiKey: false,
    responses: { 200: json('Alive.', ids.health) },
    errors: [],
  },
  getReady: {
    method: 'GET',
    path: '/ready',
    summary: 'The store and queue answer, and the process is not stopping',
    tag: 'system',
    source: 'P1, P3',
    apiKey: false,
    responses: { 200: json('Ready to serve.', ids.ready) },
    errors: [503],
  },
  getOpenApi: {
    method: 'GET',
    path: '/doc',
    summary: 'This OpenAPI 3.0 document',
    tag: 'system',
    source: '4.2',
    apiKey: false,
    responses: {
      200: {
        description: 'OpenAPI 3.0.3 document of the routes this instance serves.',
        contentType: 'application/json',
      },
    },
    errors: [],
  },
  getReferencePage: {
    method: 'GET',
    path: '/docs',
    summary: 'This document as a browsable API reference',
    tag: 'system',
    source: '4.2',
    apiKey: false,
    description:
      'An HTML page that renders /doc with Swagger UI, served with its scripts and styles by the service itself (works offline).',
    responses: { 200: { description: 'The reference page.', contentType: 'text/html' } },
    errors: [],
  },
  getReferenceAsset: {
    method: 'GET',
    path: '/docs/assets/{asset}',
    summary: 'A script or style sheet of the reference page',
    tag: 'system',
    source: '4.2',
    apiKey: false,
    responses: { 200: { description: 'The file.', contentType: ['text/javascript', 'text/css'] } },
    errors: [404],
  },
  getMetrics: {
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics for operators',
    tag: 'system',
    source: 'P1',
    apiKey: false,
    responses: { 200: { description: 'Prometheus text exposition format.', contentType: 'text/plain' } },
    errors: [],
  },

  // Upstream body: status and key information
  getOpcoStatus: {
    method: 'GET',
    path: '/{opcoId}/status',
    summary: 'Health of an upstream body',
    tag: 'opco',
    source: '4.3',
    apiKey: true,
    responses: { 200: json('Health verdict (D13).', ids.statusResponse) },
    errors: [...KEYED, 404, 501],
    profileRoute: 'GET /status',
  },
  getCfaKeyInfo: {
    method: 'GET',
    path: '/{opcoId}/cfakeyinfo',
    summary: 'Validity of the key assigned to a SIREN',
    tag: 'opco',
    source: '4.4',
    apiKey: true,
    query: ids.cfakeyinfoQuery,
    responses: { 200: json('Key information.', ids.cfakeyinfoResponse) },
    errors: UPSTREAM_READ,
    profileRoute: 'GET /cfakeyinfo',
    upstreamAnswer: ids.cfakeyinfoResponse,
  },

  // Dossiers
  getDossier: {
    method: 'GET',
    path: '/{opcoId}/dossiers',
    summary: 'One dossier',
    tag: 'dossiers',
    source: '4.5',
    apiKey: true,
    description:
      'Exclusive modes: numeroInterne alone, or numeroExterne with numeroDeca. Mixed, partial or empty queries give 400.',
    query: ids.dossierQuery,
    responses: { 200: json('The dossier.', ids.dossier) },
    errors: UPSTREAM_READ,
    profileRoute: 'GET /dossiers',
    upstreamAnswer: ids.dossier,
    audit: PERSONAL_READ,
  },
  listDossierEtats: {
    method: 'GET',
    path: '/{opcoId}/dossiers/etats',
    summary: 'A page of dossier states',
    tag: 'dossiers',
    source: '4.6',
    apiKey: true,
    query: ids.etatsQuery,
    responses: { 200: json('A page of states.', ids.etatsPage) },
    errors: UPSTREAM_READ,
    profileRoute: 'GET /dossiers/etats',
    upstreamAnswer: ids.etatsPage,
  },
  listDossiers: {
    method: 'GET',
    path: '/{opcoId}/dossiers/liste',
    summary: 'Dossiers by internal numbers (at most 50)',
    tag: 'dossiers',
    source: '4.7',
    apiKey: true,
    query: ids.listeQuery,
    responses: { 200: json('The dossiers found and the numbers not found.', ids.liste) },
    errors: UPSTREAM_READ,
    profileRoute: 'GET /dossiers/liste',
    upstreamAnswer: ids.liste,
    audit: PERSONAL_READ,
  },
  postDossier: asyncPost(
    'dossiers',
    '4.8',
    ids.dossierBody,
    'Submit a dossier (job post-dossier; composite with _files, D16)',
  ),

  // Factures
  postFacture: asyncPost('factures', '4.9', ids.factureBody, 'Submit an invoice (job post-facture)'),
  listFactureEtats: {
    method: 'GET',
    path: '/{opcoId}/factures/etats',
    summary: 'A page of invoice states',
    tag: 'factures',
    source: '4.10',
    apiKey: true,
    query: ids.facturesEtatsQuery,
    responses: { 200: json('A page of invoice states.', ids.facturesEtatsPage) },
    errors: UPSTREAM_READ,
    profileRoute: 'GET /factures/etats',
    upstreamAnswer: ids.facturesEtatsPage,
  },

  // Conventions, certificats, documents
  postConvention: asyncPost(
    'conventions',
    '4.11',
    ids.conventionBody,
    'Submit a training agreement (job post-convention)',
  ),
  postCertificat: asyncPost(
    'certificats',
    '4.12',
    ids.certificatBody,
    'Submit a completion certificate (job post-certificat)',
  ),
  postDocument: asyncPost('documents', '4.12b', ids.documentBody, 'Submit a document (job post-document)'),

  // Jobs
  getJob: {
    method: 'GET',
    path: '/{opcoId}/jobs/{jobId}',
    summary: 'State and result of a job',
    tag: 'jobs',
    source: '4.13',
    apiKey: true,
    description:
      'Visible only to the tenant that created it. Poll after 2 s, then every 5 s for a minute, then every 30 s; or use webhooks.',
    responses: { 200: json('The job.', ids.job) },
    errors: STORED,
  },

  // Sync (SPEC 4.14, D19)
  startSync: {
    method: 'POST',
    path: '/sync/dossiers',
    summary: 'Start a bulk sync of all dossiers',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    body: ids.syncBody,
    responses: { 202: json('Accepted: the sync is pending.', ids.syncAccepted) },
    errors: [...BODY, ...KEYED, 409, 501, 503],
    audit: CHANGE,
  },
  getSync: {
    method: 'GET',
    path: '/sync/{syncId}',
    summary: 'Progress of a sync',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    responses: { 200: json('The sync.', ids.sync) },
    errors: STORED,
  },
  cancelSync: {
    method: 'DELETE',
    path: '/sync/{syncId}',
    summary: 'Cancel a sync',
    tag: 'sync',
    source: '4.14',
    apiKey: true,
    responses: { 200: json('Cancelled, or already finished (current state and a message).', ids.syncCancellation) },
    errors: STORED,
    audit: CHANGE,
  },

  // Webhooks (SPEC 4.15, D9)
  createWebhook: {
    method: 'POST',
    path: '/webhooks',
    summary: 'Subscribe to events',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    description:
      'Each event subscribed to is then POSTed to callbackUrl, signed: its body and headers are under Callbacks, one per event type.',
    body: ids.webhookCreateBody,
    responses: { 201: json('Created; the only answer that shows secret.', ids.webhook) },
    errors: [...BODY, ...KEYED, 503],
    audit: WEBHOOK_CHANGE,
  },
  listWebhooks: {
    method: 'GET',
    path: '/webhooks',
    summary: "The tenant's webhooks",
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    responses: { 200: json('Webhooks, without secret.', ids.webhookList) },
    errors: [...KEYED, 503],
  },
  updateWebhook: {
    method: 'PATCH',
    path: '/webhooks/{id}',
    summary: 'Change a webhook',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    body: ids.webhookUpdateBody,
    responses: { 200: json('The webhook after the change.', ids.webhook) },
    errors: [...BODY, ...STORED],
    audit: WEBHOOK_CHANGE,
  },
  deleteWebhook: {
    method: 'DELETE',
    path: '/webhooks/{id}',
    summary: 'Delete a webhook',
    tag: 'webhooks',
    source: '4.15',
    apiKey: true,
    responses: { 200: json('Deleted.', ids.deleted) },
    errors: STORED,
    audit: WEBHOOK_CHANGE,
  },
  listWebhookDeliveries: {
    method: 'GET',
    path: '/webhooks/{id}/logs',
    summary: 'Delivery attempts of a webhook',
    tag: 'webhooks',
    source: '4.15',
    description:
      'Newest first, filtered by status, event and creation time; the next page is at the address of the Link header (rel="next").',
    apiKey: true,
    query: ids.deliveryLogQuery,
    responses: { 200: json('Delivery records, newest first.', ids.deliveryList) },
    errors: [400, ...STORED],
  },
  testWebhook: {
    method: 'POST',
    path: '/webhooks/{id}/test',
    summary: 'Send a test notification',
    tag: 'webhooks',
    source: 'P10',
    apiKey: true,
    description: 'A webhook.test event to this webhook only, signed and retried like any other.',
    responses: { 202: json('The test delivery is on its way.', ids.deliveryQueued) },
    errors: STORED,
    audit: WEBHOOK_CHANGE,
  },
  resendWebhookDelivery: {
    method: 'POST',
    path: '/webhooks/{id}/deliveries/{deliveryId}/resend',
    summary: 'Send a delivery again',
    tag: 'webhooks',
    source: 'P10',
    apiKey: true,
    description: 'A delivered or failed delivery is sent again, same Svc-Delivery-Id and body, attempts starting over.',
    responses: { 202: json('The delivery is on its way again.', ids.deliveryQueued) },
    errors: [...STORED, 409],
    audit: WEBHOOK_CHANGE,
  },
  recoverWebhookDeliveries: {
    method: 'POST',
    path: '/webhooks/{id}/recover',
    summary: 'Send again every failed delivery since a time',
    tag: 'webhooks',
    source: 'P10',
    apiKey: true,
    body: ids.webhookRecoverBody,
    responses: { 202: json('How many failed deliveries are on their way again.', ids.webhookRecovered) },
    errors: [...BODY, ...STORED],
    audit: WEBHOOK_CHANGE,
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/webhooks/{id}/rotate-secret',
    summary: 'Replace the signing secret',
    tag: 'webhooks',
    source: 'P10',
    apiKey: true,
    description: 'The new secret signs at once; the previous one still signs beside it for 24 hours.',
    responses: { 200: json('The new secret, shown once.', ids.webhookSecret) },
    errors: STORED,
    audit: WEBHOOK_CHANGE,
  },

  // Pollers (D21)
  listPollers: {
    method: 'GET',
    path: '/pollers',
    summary: "The tenant's pollers",
    tag: 'pollers',
    source: 'D21',
    apiKey: true,
    responses: { 200: json('Pollers.', ids.pollerList) },
    errors: [...KEYED, 503],
  },
  deletePoller: {
    method: 'DELETE',
    path: '/pollers/{opcoId}',
    summary: 'Stop the poller of an upstream body',
    tag: 'pollers',
    source: 'D21',
    apiKey: true,
    responses: { 200: json('Stopped.', ids.deleted) },
    errors: STORED,
    audit: CHANGE,
  },

  // Audit records (SPEC 5.3, 5.5; D32)
  listAudit: {
    method: 'GET',
    path: '/audit',
    summary: "The tenant's audit records",
    tag: 'audit',
    source: 'D32',
    apiKey: true,
    description:
      'Who did what to which job, webhook, delivery or sync of this tenant, newest first; the next page is at the address of the Link header (rel="next"). Never a body, a key or personal data.',
    query: ids.auditQuery,
    responses: { 200: json('Audit records, newest first.', ids.auditPage) },
    errors: [400, ...KEYED, 503],
  },

  // Operators, across tenants (P9): read-mostly, tenants shown by their hash, never a key or a secret
  listAdminJobs: {
    ...operatorRead(
      '/admin/jobs',
      'Jobs of every tenant',
      ids.adminJobPage,
      'Jobs, newest first, with their errors, and counts by status per opcoId.',
    ),
    query: ids.adminJobQuery,
    errors: OPERATOR_LIST,
  },
  getAdminJob: {
    ...operatorRead(
      '/admin/jobs/{jobId}',
      'One job of any tenant, opened',
      ids.adminJob,
      'Its steps and attempts, its error with the upstream answer, whether it can be retried, its audit records; never its body, key or files.',
    ),
    errors: [...OPERATOR, 404],
  },
  retryAdminJob: {
    method: 'POST',
    path: '/admin/jobs/{jobId}/retry',
    summary: 'Send a failed job back to pending, for its tenant',
    tag: 'operator',
    source: 'P9, P23, D18',
    apiKey: false,
    operator: true,
    description:
      'The job keeps its id and history; its completed steps are skipped, and a step whose answer was lost is looked up upstream first (D18). 409 when it is not failed or its sealed inputs were purged (jobs.retryWindowHours).',
    responses: { 202: json('The job is pending again.', ids.asyncAccepted) },
    errors: [...OPERATOR, 404, 409],
    audit: CHANGE,
  },
  retryAdminJobs: {
    method: 'POST',
    path: '/admin/jobs/retry',
    summary: 'Send every failed job matching a filter back to pending',
    tag: 'operator',
    source: 'P9, P23, D18',
    apiKey: false,
    operator: true,
    description:
      'By opcoId, error code and failure time, at most `limit` (1000) per request; `dryRun` counts without changing anything. One audit record per job retried.',
    body: ids.adminJobRetryBody,
    responses: { 200: json('What was retried.', ids.adminJobRetried) },
    errors: [...BODY, ...OPERATOR],
    audit: CHANGE,
  },
  getAdminHistory: {
    ...operatorRead(
      '/admin/history',
      'Counts minute by minute, across instances',
      ids.adminHistory,
      'Requests by status class, upstream calls by outcome and budget per opcoId, jobs and deliveries by outcome, queue depths; kept history.retentionDays.',
    ),
    query: ids.adminHistoryQuery,
    errors: OPERATOR_LIST,
  },
  listAdminDeliveries: {
    ...operatorRead(
      '/admin/deliveries',
      'Webhook deliveries of every tenant',
      ids.adminDeliveryPage,
      'Deliveries, newest first (failed ones by default).',
    ),
    query: ids.adminDeliveryQuery,
    errors: OPERATOR_LIST,
  },
  resendAdminDelivery: {
    method: 'POST',
    path: '/admin/deliveries/{deliveryId}/resend',
    summary: 'Send a delivery again, for its tenant',
    tag: 'operator',
    source: 'P9, P10',
    apiKey: false,
    operator: true,
    description:
      'As POST /webhooks/{id}/deliveries/{deliveryId}/resend: same Svc-Delivery-Id and body, attempts starting over.',
    responses: { 202: json('The delivery is on its way again.', ids.deliveryQueued) },
    errors: [...OPERATOR, 404, 409],
    audit: CHANGE,
  },
  listAdminAudit: {
    ...operatorRead(
      '/admin/audit',
      'Audit records of every tenant and operator',
      ids.auditPage,
      'Audit records, newest first, filtered by tenant hash, actor, action, opcoId and time.',
    ),
    query: ids.adminAuditQuery,
    errors: OPERATOR_LIST,
  },
  listAdminWebhooks: {
    ...operatorRead(
      '/admin/webhooks',
      'Disabled or failing webhooks of every tenant',
      ids.adminWebhookPage,
      'Webhooks without their secrets.',
    ),
    query: ids.adminWebhookQuery,
    errors: OPERATOR_LIST,
  },
  listAdminSyncs: {
    ...operatorRead(
      '/admin/syncs',
      'Bulk syncs of every tenant',
      ids.adminSyncPage,
      'Syncs, newest first (running ones by default), with their progress.',
    ),
    query: ids.adminSyncQuery,
    errors: OPERATOR_LIST,
  },
  listAdminPollers: operatorRead(
    '/admin/pollers',
    'Pollers of every tenant',
    ids.adminPollerList,
    'Every poller, by opcoId (at most 1000).',
  ),
  listAdminUpstreams: operatorRead(
    '/admin/upstreams',
    'Rate limit, budget and hub state per upstream body',
    ids.adminUpstreamList,
    'One entry per configured opcoId.',
  ),
  listAdminQueues: operatorRead(
    '/admin/queues',
    'Depth of the work queues',
    ids.adminQueueList,
    'One entry per work queue of the enabled plugins.',
  ),
  getConsole: consoleFile('/console', 'text/html', 'The operator console, a web page'),
  getConsoleScript: consoleFile('/console/app.js', 'text/javascript', 'The script of the operator console'),
  getConsoleStyle: consoleFile('/console/app.css', 'text/css', 'The style sheet of the operator console'),
} as const satisfies Record<string, OperationSpec>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;

export const operationIds = Object.keys(operations) as OperationId[];

/** The routes a profile can support (`'GET /dossiers'`), from the operations that go upstream. */
export type ProfileRoute = {
  [K in OperationId]: Operations[K] extends { profileRoute: infer R extends string } ? R : never;
}[OperationId];

export const profileRoutes: readonly ProfileRoute[] = operationIds.flatMap((id) => {
  const spec: OperationSpec = operations[id];
  // The assertion is needed (tsc refuses string[] here); the rule judges it by the contextual type alone.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return spec.profileRoute ? [spec.profileRoute as ProfileRoute] : [];
});

/** The operation that calls a profile route. */
export function operationOfRoute(route: ProfileRoute): OperationSpec {
  return operations[operationIds.find((id) => (operations[id] as OperationSpec).profileRoute === route)!];
}

export function isOperationId(id: string): id is OperationId {
  return Object.hasOwn(operations, id);
}

export function operation(id: OperationId): OperationSpec {
  return operations[id];
}

/** `/{opcoId}/jobs/{jobId}` -> `/:opcoId/jobs/:jobId` (@koa/router). */
export function routerPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}

/** The operation of a method and OpenAPI path, e.g. findOperation('GET', '/{opcoId}/dossiers'). */
export function findOperation(method: HttpMethod, path: string): OperationId | undefined {
  return operationIds.find((id) => operations[id].method === method && operations[id].path === path);
}
