/**
 * The catalogue of JSON Schemas in json/: their ids and how to read them.
 *
 * A schema id is the file name without `.schema.json` (`facture-body`); the schema's `$id` is
 * SCHEMA_BASE + file name, and cross-file `$ref`s are relative file names, so editors resolve them
 * from disk and ajv resolves them against `$id`. The base is a name, not a fetchable location.
 */
import { readFileSync } from 'node:fs';

export const SCHEMA_BASE = 'https://opco-proxy.example/schemas/';
export const SCHEMA_FILE_SUFFIX = '.schema.json';

/** Every schema of json/, so callers never type an id by hand. A test keeps this in step with the directory. */
export const schemaIds = {
  // Resources and responses (SPEC 2, 4)
  dossier: 'dossier',
  etatsPage: 'etats-page',
  etatsItem: 'etats-item',
  liste: 'liste',
  facturesEtatsPage: 'factures-etats-page',
  facturesEtatsItem: 'factures-etats-item',
  job: 'job',
  jobStatus: 'job-status',
  sync: 'sync',
  syncStatus: 'sync-status',
  webhook: 'webhook',
  webhookList: 'webhook-list',
  webhookSecret: 'webhook-secret',
  deliveryQueued: 'delivery-queued',
  webhookRecoverBody: 'webhook-recover-body',
  webhookRecovered: 'webhook-recovered',
  deliveryLogQuery: 'delivery-log-query',
  webhookNotification: 'webhook-notification',
  delivery: 'delivery',
  deliveryList: 'delivery-list',
  eventType: 'event-type',
  errorBody: 'error-body',
  statusResponse: 'status-response',
  cfakeyinfoResponse: 'cfakeyinfo-response',
  asyncAccepted: 'async-accepted',
  syncAccepted: 'sync-accepted',
  syncCancellation: 'sync-cancellation',
  deleted: 'deleted',
  poller: 'poller',
  pollerList: 'poller-list',
  health: 'health',
  ready: 'ready',
  // Operators, across tenants (P9)
  tenantHash: 'tenant-hash',
  adminJobPage: 'admin-job-page',
  adminDeliveryPage: 'admin-delivery-page',
  adminWebhookPage: 'admin-webhook-page',
  adminSyncPage: 'admin-sync-page',
  adminPollerList: 'admin-poller-list',
  adminUpstreamList: 'admin-upstream-list',
  admissionState: 'admission-state',
  adminQueueList: 'admin-queue-list',
  adminHistory: 'admin-history',
  adminJob: 'admin-job',
  adminJobRetried: 'admin-job-retried',
  queueDepth: 'queue-depth',
  // Audit records (D32)
  auditRecord: 'audit-record',
  auditPage: 'audit-page',
  // Queries (SPEC 4.4 to 4.10): all values are strings, as they arrive
  cfakeyinfoQuery: 'cfakeyinfo-query',
  dossierQuery: 'dossier-query',
  etatsQuery: 'etats-query',
  listeQuery: 'liste-query',
  facturesEtatsQuery: 'factures-etats-query',
  adminJobQuery: 'admin-job-query',
  adminDeliveryQuery: 'admin-delivery-query',
  adminWebhookQuery: 'admin-webhook-query',
  adminSyncQuery: 'admin-sync-query',
  auditQuery: 'audit-query',
  adminAuditQuery: 'admin-audit-query',
  adminHistoryQuery: 'admin-history-query',
  // Bodies (SPEC 4.8 to 4.15)
  dossierBody: 'dossier-body',
  factureBody: 'facture-body',
  conventionBody: 'convention-body',
  certificatBody: 'certificat-body',
  documentBody: 'document-body',
  files: 'files',
  syncBody: 'sync-body',
  webhookCreateBody: 'webhook-create-body',
  webhookUpdateBody: 'webhook-update-body',
  callbackUrl: 'callback-url',
  eventList: 'event-list',
  adminJobRetryBody: 'admin-job-retry-body',
  // The kernel's part of the operator's config file (D2, D3); plugins and drivers add their
  // sections at start-up (core/src/config/config-sections.ts). json/config.schema.json is that assembly
  // for the bundled ones, written at build time for editors: not registered here.
  kernelConfig: 'kernel-config',
  // The hub (D26-D30, @opco-proxy/hub-server): its config file, its admin API's body, and the
  // messages of its WebSocket protocol with the instances (plugins/hub). Not part of /doc.
  hubConfig: 'hub-config',
  hubKeyBody: 'hub-key-body',
  hubRateLimit: 'hub-rate-limit',
  hubUsageEntry: 'hub-usage-entry',
  hubMetricsReport: 'hub-metrics-report',
  hubHello: 'hub-hello',
  hubAsk: 'hub-ask',
  hubCancel: 'hub-cancel',
  hubDone: 'hub-done',
  hubMetrics: 'hub-metrics',
  hubWelcome: 'hub-welcome',
  hubGrant: 'hub-grant',
  hubRefused: 'hub-refused',
  hubError: 'hub-error',
} as const;

export type SchemaId = (typeof schemaIds)[keyof typeof schemaIds];

export const allSchemaIds: readonly SchemaId[] = Object.values(schemaIds);

/** A draft-07 JSON Schema as stored in json/. */
export type JsonSchema = { [keyword: string]: unknown };

const parsed = new Map<SchemaId, JsonSchema>();

export function isSchemaId(id: string): id is SchemaId {
  return (allSchemaIds as readonly string[]).includes(id);
}

/** The stored schema; read once from disk, a fresh copy each call so no caller can alter the cache. */
export function loadSchema(id: SchemaId): JsonSchema {
  return structuredClone(readSchema(id));
}

/** Shared, read-only: for this package's own compilers (ajv, the OpenAPI builder). */
export function readSchema(id: SchemaId): JsonSchema {
  if (!isSchemaId(id)) throw new Error(`unknown schema id "${String(id)}"`);
  let schema = parsed.get(id);
  if (!schema) {
    // Compiled code lives in dist/src/, the JSON stays in json/: tsc never copies it.
    schema = JSON.parse(
      readFileSync(new URL(`../../json/${id}${SCHEMA_FILE_SUFFIX}`, import.meta.url), 'utf8'),
    ) as JsonSchema;
    parsed.set(id, schema);
  }
  return schema;
}

/** `facture-body` -> `https://.../facture-body.schema.json` */
export function schemaUri(id: SchemaId): string {
  return `${SCHEMA_BASE}${id}${SCHEMA_FILE_SUFFIX}`;
}

/** The schema id a `$ref` names (`files.schema.json`, absolute or relative), or undefined. */
export function refToSchemaId(ref: string): SchemaId | undefined {
  const file = ref.startsWith(SCHEMA_BASE) ? ref.slice(SCHEMA_BASE.length) : ref;
  if (!file.endsWith(SCHEMA_FILE_SUFFIX)) return undefined;
  const id = file.slice(0, -SCHEMA_FILE_SUFFIX.length);
  return isSchemaId(id) ? id : undefined;
}

export interface SchemaShape {
  /** Top-level fields the schema requires. */
  required: string[];
  /** JSON type of each top-level property whose type is one word (`array`, `object`, ...). */
  types: Record<string, string>;
}

/** The top level of a schema (pipeline step 8 uses it to tell unusable answers from drift). */
export function readSchemaShape(id: SchemaId): SchemaShape {
  const schema = readSchema(id);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const types: Record<string, string> = {};
  for (const [name, property] of Object.entries(properties))
    if (typeof property.type === 'string') types[name] = property.type;
  return { required: [...((schema.required as string[] | undefined) ?? [])], types };
}
