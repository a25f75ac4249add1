/* eslint-disable */
/**
 * generated — do not edit.
 * Source: schemas/json/*.schema.json. Regenerate with `npm run generate -w @opco-proxy/schemas`.
 */

/**
 * Only the records of this tenant.
 */
export type TenantHash = string;
/**
 * P9: a tenant as operators see it, the SHA-256 (lowercase hex) of its X-API-KEY; the key itself is never shown.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "TenantHash".
 */
export type TenantHash1 = string;
/**
 * SPEC 6.1 event types, plus sync.failed and sync.cancelled (D22), webhook.test (a test notification asked for by the tenant) and webhook.disabled (a webhook failing for 5 days was switched off).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "EventType".
 */
export type EventType =
  | "dossier.etat_changed"
  | "dossier.updated"
  | "facture.etat_changed"
  | "job.completed"
  | "job.failed"
  | "job.progress"
  | "sync.started"
  | "sync.batch"
  | "sync.completed"
  | "sync.failed"
  | "sync.cancelled"
  | "webhook.test"
  | "webhook.disabled";
/**
 * SPEC 3.1: states of a job and of each step of a composite job.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "JobStatus".
 */
export type JobStatus = "pending" | "processing" | "completed" | "failed";
/**
 * SPEC 3.2: states of a sync.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "SyncStatus".
 */
export type SyncStatus = "pending" | "processing" | "completed" | "failed" | "cancelled";
/**
 * Event types a webhook subscribes to: at least one, no repeats.
 *
 * @minItems 1
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "EventList".
 */
export type EventList = [EventType, ...EventType[]];
/**
 * A webhook callback URL (SPEC 4.15). https is enforced outside development mode by the webhooks plugin.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "CallbackUrl".
 */
export type CallbackUrl = string;
/**
 * SPEC 4.15: GET /webhooks/{id}/logs.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookDeliveryList".
 */
export type WebhookDeliveryList = WebhookDelivery[];
/**
 * D21: GET /pollers, the tenant's pollers.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "PollerList".
 */
export type PollerList = Poller[];
/**
 * SPEC 4.15: GET /webhooks, the tenant's webhooks without secret.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookList".
 */
export type WebhookList = Webhook[];

/**
 * Every schema id of json/ mapped to its type.
 */
export interface SchemaTypes {
  "admin-audit-query": AdminAuditQuery;
  "admin-delivery-page": AdminDeliveryPage;
  "admin-delivery-query": AdminDeliveryQuery;
  "admin-history-query": AdminHistoryQuery;
  "admin-history": AdminHistory;
  "admin-job-page": AdminJobPage;
  "admin-job-query": AdminJobQuery;
  "admin-job-retried": AdminJobRetried;
  "admin-job-retry-body": AdminJobRetryBody;
  "admin-job": AdminJob;
  "admin-poller-list": AdminPollerList;
  "admin-queue-list": AdminQueueList;
  "admin-sync-page": AdminSyncPage;
  "admin-sync-query": AdminSyncQuery;
  "admin-upstream-list": AdminUpstreamList;
  "admin-webhook-page": AdminWebhookPage;
  "admin-webhook-query": AdminWebhookQuery;
  "admission-state": AdmissionState;
  "async-accepted": AsyncAccepted;
  "audit-page": AuditPage;
  "audit-query": AuditQuery;
  "audit-record": AuditRecord;
  "callback-url": CallbackUrl;
  "certificat-body": CertificatBody;
  "cfakeyinfo-query": CfaKeyInfoQuery;
  "cfakeyinfo-response": CfaKeyInfo;
  "convention-body": ConventionBody;
  deleted: Deleted;
  "delivery-list": WebhookDeliveryList;
  "delivery-log-query": DeliveryLogQuery;
  "delivery-queued": DeliveryQueued;
  delivery: WebhookDelivery;
  "document-body": DocumentBody;
  "dossier-body": DossierBody;
  "dossier-query": DossierQuery;
  dossier: Dossier;
  "error-body": ErrorBody;
  "etats-item": DossierEtat;
  "etats-page": DossierEtatsPage;
  "etats-query": DossierEtatsQuery;
  "event-list": EventList;
  "event-type": EventType;
  "facture-body": FactureBody;
  "factures-etats-item": FactureEtat;
  "factures-etats-page": FactureEtatsPage;
  "factures-etats-query": FactureEtatsQuery;
  files: Files;
  health: Health;
  "hub-ask": HubAsk;
  "hub-cancel": HubCancel;
  "hub-config": HubConfigFile;
  "hub-done": HubDone;
  "hub-error": HubError;
  "hub-grant": HubGrant;
  "hub-hello": HubHello;
  "hub-key-body": HubKeyBody;
  "hub-metrics-report": HubMetricsReport;
  "hub-metrics": HubMetrics;
  "hub-rate-limit": HubRateLimit;
  "hub-refused": HubRefused;
  "hub-usage-entry": HubUsageEntry;
  "hub-welcome": HubWelcome;
  "job-status": JobStatus;
  job: Job2;
  "kernel-config": KernelConfig;
  "liste-query": DossierListeQuery;
  liste: DossierListe;
  "poller-list": PollerList;
  poller: Poller;
  "queue-depth": QueueDepth;
  ready: Ready;
  "status-response": OpcoStatus;
  "sync-accepted": SyncAccepted;
  "sync-body": SyncBody;
  "sync-cancellation": SyncCancellation;
  "sync-status": SyncStatus;
  sync: Sync;
  "tenant-hash": TenantHash1;
  "webhook-create-body": WebhookCreateBody;
  "webhook-list": WebhookList;
  "webhook-notification": WebhookNotification;
  "webhook-recover-body": WebhookRecoverBody;
  "webhook-recovered": WebhookRecovered;
  "webhook-secret": WebhookSecret;
  "webhook-update-body": WebhookUpdateBody;
  webhook: Webhook;
}
/**
 * Filters and pages of GET /admin/audit, newest first, across tenants.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminAuditQuery".
 */
export interface AdminAuditQuery {
  /**
   * Records at or after this ISO 8601 timestamp.
   */
  since?: string;
  /**
   * Records before this ISO 8601 timestamp.
   */
  until?: string;
  /**
   * Only this action (an operationId, e.g. postDossier).
   */
  action?: string;
  /**
   * Only the records of this upstream body.
   */
  opcoId?: string;
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * From the Link header (or `next`) of the previous page.
   */
  cursor?: string;
  tenant?: TenantHash;
  /**
   * Only the records of tenants, or of operators.
   */
  actor?: "tenant" | "operator";
  /**
   * Only the records about this job (a job's page in the console).
   */
  jobId?: string;
}
/**
 * P9: webhook deliveries across tenants, newest first, without their notification bodies.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminDeliveryPage".
 */
export interface AdminDeliveryPage {
  items: {
    /**
     * Svc-Delivery-Id.
     */
    id: string;
    webhookId: string;
    tenant: TenantHash1;
    /**
     * The callback URL without credentials, query or fragment.
     */
    target: string;
    event: EventType;
    status: "delivered" | "retrying" | "failed";
    /**
     * The receiver's last answer; null when none came.
     */
    statusCode: number | null;
    attempts: number;
    error: string | null;
    createdAt: string;
    deliveredAt: string | null;
  }[];
  /**
   * Cursor of the next page (query `cursor`); null on the last page.
   */
  next: string | null;
}
/**
 * Filters and pages of GET /admin/deliveries, newest first.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminDeliveryQuery".
 */
export interface AdminDeliveryQuery {
  /**
   * Default failed; retrying shows pending ones too.
   */
  status?: "failed" | "retrying" | "delivered";
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * The `next` of the previous page.
   */
  cursor?: string;
}
/**
 * Issue 42: which minutes and series GET /admin/history answers. Without since, the last hour; without until, now.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminHistoryQuery".
 */
export interface AdminHistoryQuery {
  /**
   * First minute asked for (ISO 8601, rounded down to its minute); at most the history's retention ago.
   */
  since?: string;
  /**
   * End of the range, excluded (ISO 8601); after since.
   */
  until?: string;
  /**
   * Comma-separated series names (default all): requests, upstream, budget, jobs, deliveries, queues.
   */
  series?: string;
  /**
   * Seconds per point, a multiple of 60 (default: the smallest that gives at most 720 points).
   */
  step?: string;
}
/**
 * Issue 42: what every instance counted, minute by minute, summed across instances into points of stepSeconds. Counts are sums over a point's minutes; queue depths the largest seen in them.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminHistory".
 */
export interface AdminHistory {
  since: string;
  until: string;
  stepSeconds: number;
  /**
   * Start of each point, oldest first; every series' values line up with it.
   */
  times: string[];
  series: {
    /**
     * requests: answers by status class (2xx, 3xx, 4xx, 5xx) and the 429s among them (class 429); upstream: calls by opcoId and outcome (2xx, 4xx, 5xx, 429, timeout, network); budget: calls admitted by opcoId; jobs: submitted, completed, failed by opcoId; deliveries: delivered, retrying, failed; queues: ready messages by queue.
     */
    name: "requests" | "upstream" | "budget" | "jobs" | "deliveries" | "queues";
    /**
     * What the series counts: class, opcoId, outcome or queue.
     */
    labels: {
      [k: string]: string;
    };
    /**
     * One per time; null where no instance reported in that point.
     */
    values: (number | null)[];
  }[];
  /**
   * Per opcoId, the upstream calls its rate limit allows in one point (drawn over the budget series).
   */
  limits: {
    opcoId: string;
    perStep: number;
  }[];
}
/**
 * P9: jobs across tenants, newest first, with how many there are of each status per opcoId.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminJobPage".
 */
export interface AdminJobPage {
  /**
   * Per opcoId (only the one asked for, when opcoId is given): jobs kept (D17) by status.
   */
  counts: {
    opcoId: string;
    pending: number;
    processing: number;
    completed: number;
    failed: number;
  }[];
  items: {
    tenant: TenantHash1;
    job: Job;
  }[];
  /**
   * Cursor of the next page (query `cursor`); null on the last page.
   */
  next: string | null;
}
/**
 * As its tenant sees it (SPEC 2.5), without the upstream's result.
 */
export interface Job {
  jobId: string;
  opcoId: string;
  type:
    | "post-dossier"
    | "post-facture"
    | "post-convention"
    | "post-certificat"
    | "post-document"
    | "sync-discovery"
    | "sync-batch";
  status: JobStatus;
  /**
   * Present when completed; upstream-defined (for example status, numeroInterne, comment).
   */
  result?: {
    [k: string]: unknown;
  };
  /**
   * Present when failed.
   */
  error?: {
    message: string;
    /**
     * An error code of SPEC 7, for example UPSTREAM_ERROR.
     */
    code: string;
    /**
     * Raw upstream body, when the upstream answered.
     */
    upstream?: unknown;
    /**
     * Failed step of a composite job.
     */
    step?: number;
  };
  retries: number;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /**
   * Composite jobs only.
   */
  currentStep?: number;
  /**
   * Composite jobs only.
   */
  totalSteps?: number;
  /**
   * Composite jobs only (D16).
   */
  steps?: {
    step: number;
    name: string;
    status: JobStatus;
    /**
     * Present when completed.
     */
    result?: {
      [k: string]: unknown;
    };
  }[];
}
/**
 * Filters and pages of GET /admin/jobs, newest first.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminJobQuery".
 */
export interface AdminJobQuery {
  status?: JobStatus;
  /**
   * Only the jobs of this upstream body.
   */
  opcoId?: string;
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * The `next` of the previous page.
   */
  cursor?: string;
}
/**
 * Issue 42: what POST /admin/jobs/retry did (or, with dryRun, would do).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminJobRetried".
 */
export interface AdminJobRetried {
  dryRun: boolean;
  /**
   * Failed jobs matching the filter (up to limit).
   */
  matched: number;
  /**
   * Sent back to pending (with dryRun: that could be).
   */
  retried: number;
  /**
   * Matching jobs whose sealed inputs or files were already purged: they stay failed; their tenants submit them anew.
   */
  notRetryable: number;
  /**
   * The jobs retried (with dryRun: that would be).
   */
  jobIds: string[];
  /**
   * More jobs matched than limit: call again.
   */
  more: boolean;
}
/**
 * Issue 42: which failed jobs POST /admin/jobs/retry sends back to pending. With dryRun, nothing is changed and the answer says how many would be.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminJobRetryBody".
 */
export interface AdminJobRetryBody {
  opcoId?: string;
  /**
   * The jobs' error code (SPEC 7), for example UPSTREAM_ERROR.
   */
  code?: string;
  /**
   * Jobs that failed at or after this time.
   */
  failedSince?: string;
  /**
   * Jobs that failed before this time.
   */
  failedUntil?: string;
  /**
   * Count only (the console's confirmation).
   */
  dryRun?: boolean;
  /**
   * At most this many jobs in one request (default and maximum 1000); call again for the rest.
   */
  limit?: number;
}
/**
 * Issue 42: one job of any tenant, opened: as its tenant sees it without the upstream's result, its steps with their attempts, whether it can be retried; its audit records are GET /admin/audit?jobId=. Never its body, key or files.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminJob".
 */
export interface AdminJob {
  tenant: TenantHash1;
  job: Job1;
  /**
   * Every step, single-step jobs included.
   */
  steps: {
    step: number;
    name: string;
    status: JobStatus;
    /**
     * Upstream attempts made for the step.
     */
    attempts: number;
    /**
     * Its last call may have reached the upstream unanswered: a retry looks the dossier up first (D18).
     */
    uncertain: boolean;
  }[];
  retry: {
    possible: boolean;
    /**
     * When its sealed inputs are purged (jobs.retryWindowHours).
     */
    until: string | null;
    /**
     * Why it cannot be retried.
     */
    reason: string | null;
  };
  /**
   * How many times operators sent it back to pending.
   */
  operatorRetries?: number;
}
/**
 * As its tenant sees it (SPEC 2.5), without the upstream's result; a failed job's error carries the upstream's answer.
 */
export interface Job1 {
  jobId: string;
  opcoId: string;
  type:
    | "post-dossier"
    | "post-facture"
    | "post-convention"
    | "post-certificat"
    | "post-document"
    | "sync-discovery"
    | "sync-batch";
  status: JobStatus;
  /**
   * Present when completed; upstream-defined (for example status, numeroInterne, comment).
   */
  result?: {
    [k: string]: unknown;
  };
  /**
   * Present when failed.
   */
  error?: {
    message: string;
    /**
     * An error code of SPEC 7, for example UPSTREAM_ERROR.
     */
    code: string;
    /**
     * Raw upstream body, when the upstream answered.
     */
    upstream?: unknown;
    /**
     * Failed step of a composite job.
     */
    step?: number;
  };
  retries: number;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /**
   * Composite jobs only.
   */
  currentStep?: number;
  /**
   * Composite jobs only.
   */
  totalSteps?: number;
  /**
   * Composite jobs only (D16).
   */
  steps?: {
    step: number;
    name: string;
    status: JobStatus;
    /**
     * Present when completed.
     */
    result?: {
      [k: string]: unknown;
    };
  }[];
}
/**
 * P9: every poller (D21) across tenants, by opcoId.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminPollerList".
 */
export interface AdminPollerList {
  items: {
    tenant: TenantHash1;
    poller: Poller;
  }[];
}
/**
 * D21: a poller started by a sync with enablePoller, one per tenant and opcoId.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Poller".
 */
export interface Poller {
  opcoId: string;
  /**
   * active while it polls.
   */
  status: string;
  intervalMs: number;
  /**
   * Null before the first successful poll.
   */
  lastPollAt: string | null;
  createdAt: string;
  /**
   * When the next poll is due.
   */
  nextPollAt: string;
  /**
   * Why the last poll failed; null after a successful one.
   */
  lastError: string | null;
}
/**
 * P9: depth of each work queue the enabled plugins use.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminQueueList".
 */
export interface AdminQueueList {
  /**
   * embedded or rabbitmq.
   */
  kind: string;
  items: QueueDepth[];
}
/**
 * The depth of one work queue (Queue.depth).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "QueueDepth".
 */
export interface QueueDepth {
  queue: string;
  /**
   * Messages waiting for a consumer.
   */
  ready: number;
  /**
   * Messages waiting out a delay (retries, P8); null when the backend cannot tell.
   */
  delayed: number | null;
  /**
   * Messages handed to this process's consumers and not yet settled; null when the backend cannot tell.
   */
  unacknowledged: number | null;
  /**
   * Consumers attached (all processes for RabbitMQ, this one for embedded).
   */
  consumers: number | null;
}
/**
 * P9: bulk syncs across tenants, newest first.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminSyncPage".
 */
export interface AdminSyncPage {
  items: {
    tenant: TenantHash1;
    sync: Sync;
  }[];
  /**
   * Cursor of the next page (query `cursor`); null on the last page.
   */
  next: string | null;
}
/**
 * SPEC 2.6: a bulk sync (GET /sync/{syncId}).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Sync".
 */
export interface Sync {
  syncId: string;
  opcoId: string;
  status: SyncStatus;
  /**
   * Total dossiers.
   */
  total: number;
  discovered: number;
  fetched: number;
  /**
   * Discovery covers 0 to 0.5, fetch covers 0.5 to 1.
   */
  progress: number;
  batchesCompleted: number;
  totalBatches: number;
  /**
   * Null until the first batch is fetched; the end time once finished.
   */
  estimatedEnd: string | null;
  /**
   * Message when failed.
   */
  error: string | null;
  startedAt: string;
  completedAt: string | null;
}
/**
 * Filters and pages of GET /admin/syncs, newest first.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminSyncQuery".
 */
export interface AdminSyncQuery {
  /**
   * Default running (pending or processing).
   */
  status?: "running" | "completed" | "failed" | "cancelled";
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * The `next` of the previous page.
   */
  cursor?: string;
}
/**
 * P9: per upstream body, its rate limit, how this instance sees its budget (store budget or hub), and the last 60 seconds of calls from this instance.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminUpstreamList".
 */
export interface AdminUpstreamList {
  items: {
    opcoId: string;
    adapter: string;
    rateLimit: {
      limit: number;
      windowMs: number;
    };
    /**
     * SPEC 1.1 step 9: upstream calls of this instance in the last 60 seconds.
     */
    window: {
      requests: number;
      errors: number;
      rateLimited: number;
      averageLatencyMs: number;
    };
    admission: AdmissionState;
  }[];
}
/**
 * Pipeline step 4 for one opcoId as the provider of the admission seam sees it (D11, D12, D29, D30).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdmissionState".
 */
export interface AdmissionState {
  /**
   * store-budget (shared through the store) or hub.
   */
  provider: string;
  /**
   * Calls counted in the current window: by every instance for the store budget, by this instance's local bucket for the hub; null when unknown.
   */
  used: number | null;
  /**
   * Calls of this instance waiting for budget; null when unknown.
   */
  waiting: number | null;
  /**
   * Store budget: until a slot leaves the window, 0 when one is free.
   */
  nextFreeInMs?: number | null;
  /**
   * The slice of each window's budget that tenants whose key the upstream has not accepted yet share (issue 27, P13).
   */
  unproven?: {
    /**
     * Calls per window unproven tenants may make together: tenantKeys.unprovenShare of the limit, at least one.
     */
    limit: number;
    /**
     * Calls of unproven tenants counted in the current window; null when unknown.
     */
    used: number | null;
    /**
     * Calls of unproven tenants waiting for budget; null when unknown.
     */
    waiting: number | null;
  };
  /**
   * With the hub plugin: this instance's connection and fallback.
   */
  hub?: {
    state: "connecting" | "connected" | "disconnected" | "closed";
    instanceId: string;
    /**
     * hub: grants from the hub; local: the local bucket (D30).
     */
    mode: "hub" | "local";
    /**
     * Calls per window of the local bucket: limit / expectedInstances.
     */
    localShare: number;
    /**
     * When local calls may start after a hub loss; null when not gated.
     */
    localOpensAt: string | null;
  };
}
/**
 * P9: webhooks across tenants, without their secrets.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminWebhookPage".
 */
export interface AdminWebhookPage {
  items: {
    id: string;
    tenant: TenantHash1;
    /**
     * The callback URL without credentials, query or fragment.
     */
    target: string;
    events: EventList;
    active: boolean;
    createdAt: string;
    /**
     * Since when every delivery has failed; null when the last one was delivered.
     */
    failingSince: string | null;
    disabledAt: string | null;
    disabledReason: string | null;
  }[];
  /**
   * Cursor of the next page (query `cursor`); null on the last page.
   */
  next: string | null;
}
/**
 * Filter of GET /admin/webhooks.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AdminWebhookQuery".
 */
export interface AdminWebhookQuery {
  /**
   * disabled (default): switched off after 5 days of failures (P10); failing: every delivery has failed since failingSince; all.
   */
  state?: "disabled" | "failing" | "all";
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * The `next` of the previous page.
   */
  cursor?: string;
}
/**
 * SPEC 4.0.4: answer to an asynchronous POST, 202 pending or 200 duplicate (Idempotency-Key already seen for the tenant). warning: D15, a duplicate whose body differs from the original.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AsyncAccepted".
 */
export interface AsyncAccepted {
  jobId: string;
  status: "pending" | "duplicate";
  /**
   * /{opcoId}/jobs/{jobId}
   */
  statusUrl: string;
  warning?: "payload differs from the original request";
}
/**
 * D32: audit records, newest first; `next` (and the Link header) leads to the next page.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AuditPage".
 */
export interface AuditPage {
  items: AuditRecord[];
  /**
   * Cursor of the next page; null on the last one.
   */
  next: string | null;
}
/**
 * D32: who did what to which job, webhook, delivery or sync, and how it ended. Never a body, a key, a secret or personal data.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AuditRecord".
 */
export interface AuditRecord {
  /**
   * The record's own id.
   */
  id: string;
  /**
   * When the answer was decided.
   */
  at: string;
  /**
   * The tenant (SHA-256 of its X-API-KEY) who acted or was acted for; null for an operator action concerning no tenant.
   */
  tenant: string | null;
  actor: "tenant" | "operator";
  /**
   * The operationId of the request (postDossier, createWebhook, resendAdminDelivery, ...).
   */
  action: string;
  /**
   * The upstream body concerned, when there is one.
   */
  opcoId?: string;
  /**
   * Ids of what was acted on or created.
   */
  targets: {
    jobId?: string;
    webhookId?: string;
    deliveryId?: string;
    syncId?: string;
  };
  outcome: {
    /**
     * The HTTP status answered.
     */
    status: number;
    /**
     * The error code of a refused request (SPEC 7).
     */
    code?: string;
    /**
     * A job submission: a new job, or an Idempotency-Key seen before (SPEC 4.0.4).
     */
    idempotency?: "new" | "duplicate";
  };
  /**
   * X-Request-Id of the request: the same id is in every log line of it.
   */
  requestId: string;
  /**
   * The client's address (the socket's, or X-Forwarded-For behind trustedProxies).
   */
  clientAddress: string;
}
/**
 * Filters and pages of GET /audit, newest first.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "AuditQuery".
 */
export interface AuditQuery {
  /**
   * Records at or after this ISO 8601 timestamp.
   */
  since?: string;
  /**
   * Records before this ISO 8601 timestamp.
   */
  until?: string;
  /**
   * Only this action (an operationId, e.g. postDossier).
   */
  action?: string;
  /**
   * Only the records of this upstream body.
   */
  opcoId?: string;
  /**
   * Records per page, 1 to 100 (default 50).
   */
  limit?: string;
  /**
   * From the Link header (or `next`) of the previous page.
   */
  cursor?: string;
}
/**
 * SPEC 4.12: body of POST /{opcoId}/certificats. A top-level field the schema does not declare is refused (issue 38): it never reaches the upstream.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "CertificatBody".
 */
export interface CertificatBody {
  typeCertificat: "Intermediaire" | "Final";
  numeroInterneDossier: string;
  numeroInterneFacture?: string | number;
  dateSignature?: string;
  lieuSignatureContrat?: string;
  representantLegal?: {
    nom?: string;
    prenom?: string;
    qualite?: string;
    [k: string]: unknown;
  };
  attestationConservationPieces?: boolean;
  natureAction?: string;
  employeur: {
    siret: string;
    [k: string]: unknown;
  };
  apprenti: {
    nom: string;
    prenom: string;
    nomUsage?: string;
    [k: string]: unknown;
  };
  organismeFormation: {
    siret: string;
    [k: string]: unknown;
  };
  echeance?: {
    numero: number;
    codification?: string;
    /**
     * Hours.
     */
    duree?: number;
    dateDebut?: string;
    dateFin?: string;
    echeancePartielle?: boolean;
    [k: string]: unknown;
  };
  _files?: Files;
}
/**
 * SPEC 4.0.4: _files of an asynchronous POST, base64 contents keyed by file role: cerfa, facture, convention, certificat or document, each at most once (issue 38: a dossier's job has at most one step per role, D16). Roles become multipart part names and typeFichier values upstream. Another name is refused.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Files".
 */
export interface Files {
  cerfa?: string;
  facture?: string;
  convention?: string;
  certificat?: string;
  document?: string;
  [k: string]:
    | {
        [k: string]: unknown;
      }
    | string
    | undefined;
}
/**
 * SPEC 4.4: query of GET /{opcoId}/cfakeyinfo.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "CfaKeyInfoQuery".
 */
export interface CfaKeyInfoQuery {
  siren: string;
  /**
   * Key assigned to that SIREN.
   */
  XAPIKEY: string;
}
/**
 * SPEC 4.4: GET /{opcoId}/cfakeyinfo.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "CfaKeyInfo".
 */
export interface CfaKeyInfo {
  status: "success" | "error";
  dateFinValidite?: string;
  comment?: string | null;
  [k: string]: unknown;
}
/**
 * SPEC 4.11: body of POST /{opcoId}/conventions. Whether the four attestations are required is not shown by the spec: they are optional booleans here and the upstream decides. A top-level field the schema does not declare is refused (issue 38): it never reaches the upstream.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "ConventionBody".
 */
export interface ConventionBody {
  numeroInterneDossier: string;
  employeur: {
    siret: string;
    [k: string]: unknown;
  };
  apprenti: {
    nom: string;
    prenom: string;
    nomUsage?: string | null;
    [k: string]: unknown;
  };
  contrat: {
    dateDebutContrat: string;
    dateFinContrat: string;
    [k: string]: unknown;
  };
  organismeFormation: {
    siret: string;
    uaiCfa?: string;
    [k: string]: unknown;
  };
  formation: {
    dateDebutFormation: string;
    dateFinFormation: string;
    /**
     * Hours.
     */
    dureeFormation: number;
    rncp?: string;
    intituleQualification?: string;
    [k: string]: unknown;
  };
  couts: {
    coutTotalPedagogieCFA: number;
    montantRQTHAnnee1?: number;
    montantRQTHAnnee2?: number;
    montantRQTHAnnee3?: number;
    montantRQTHAnnee4?: number;
    nombreRepasTotaux?: number;
    nombreHebergementTotaux?: number;
    montantPremierEquipement?: number;
    mentionMobiliteInternationale?: boolean;
    accompagnementDROM?: boolean;
    [k: string]: unknown;
  };
  mandatEmployeur?: boolean;
  dateSignature?: string;
  attestationConventionSigneeEntreprise?: boolean;
  attestationConventionSigneeCFA?: boolean;
  attestationConventionSignatureProbante?: boolean;
  attestationConventionConformeJSON?: boolean;
  _files?: Files;
}
/**
 * SPEC 4.15: answer to DELETE /webhooks/{id}; also used by DELETE /pollers/{opcoId}.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Deleted".
 */
export interface Deleted {
  deleted: true;
}
/**
 * SPEC 2.8: a delivery record of GET /webhooks/{id}/logs. statusCode is null when no answer came (timeout, network error).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookDelivery".
 */
export interface WebhookDelivery {
  id: string;
  webhookId: string;
  event: EventType;
  payload: WebhookNotification;
  status: "delivered" | "retrying" | "failed";
  statusCode?: number | null;
  attempts: number;
  error?: string | null;
  deliveredAt?: string | null;
}
/**
 * SPEC 6.2: the body POSTed to a callback URL; data per event type as in D22.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookNotification".
 */
export interface WebhookNotification {
  event: EventType;
  opcoId: string;
  timestamp: string;
  data: {
    [k: string]: unknown;
  };
}
/**
 * Filters and pages of GET /webhooks/{id}/logs, newest first; the next page's address is in the Link header (rel="next").
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DeliveryLogQuery".
 */
export interface DeliveryLogQuery {
  status?: "delivered" | "retrying" | "failed";
  event?: EventType;
  /**
   * Deliveries created at or after this ISO 8601 timestamp.
   */
  since?: string;
  /**
   * Records per page, 1 to 100 (default 100).
   */
  limit?: string;
  /**
   * From the Link header of the previous page.
   */
  cursor?: string;
}
/**
 * A delivery put on its way: a test notification, or a delivery sent again (its attempts start over).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DeliveryQueued".
 */
export interface DeliveryQueued {
  deliveryId: string;
  event: EventType;
  status: "retrying";
}
/**
 * SPEC 4.12b: body of POST /{opcoId}/documents. A top-level field the schema does not declare is refused (issue 38): it never reaches the upstream.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DocumentBody".
 */
export interface DocumentBody {
  typeFichier: string;
  /**
   * @minItems 1
   */
  objets: [
    {
      typeObjet: string;
      idObjet: string;
      [k: string]: unknown;
    },
    ...{
      typeObjet: string;
      idObjet: string;
      [k: string]: unknown;
    }[]
  ];
  _files?: Files;
}
/**
 * SPEC 4.8: body of POST /{opcoId}/dossiers. The cerfa carries many upstream fields beyond the required ones; they pass through. A top-level field the schema does not declare is refused (issue 38): it never reaches the upstream.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierBody".
 */
export interface DossierBody {
  cerfa: {
    employeur: {
      siret: string;
      [k: string]: unknown;
    };
    apprenti: {
      nom: string;
      prenom: string;
      dateNaissance?: string;
      [k: string]: unknown;
    };
    contrat: {
      dateDebutContrat: string;
      dateFinContrat?: string;
      [k: string]: unknown;
    };
    formation: {
      [k: string]: unknown;
    };
    organismeFormation: {
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
  _files?: Files;
}
/**
 * SPEC 4.5: query of GET /{opcoId}/dossiers, exclusive modes: numeroInterne alone, or numeroExterne with numeroDeca.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierQuery".
 */
export interface DossierQuery {
  numeroInterne?: string;
  numeroExterne?: string;
  numeroDeca?: string;
}
/**
 * SPEC 2.1: a dossier record as answered by GET /{opcoId}/dossiers. Upstream-defined, so fields beyond those listed are kept. Only status and cerfa are essential (pipeline step 8); anything else missing is drift.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Dossier".
 */
export interface Dossier {
  /**
   * success
   */
  status: string;
  /**
   * Committed amount.
   */
  engagement?: number;
  /**
   * Internal number given by the upstream body.
   */
  numeroInterne?: string;
  /**
   * Number given by the CFA's software.
   */
  numeroExterne?: string;
  /**
   * DECA number of the contract.
   */
  numeroDeca?: string;
  /**
   * SPEC 3.3 state (TRANSMIS, EN_COURS_INSTRUCTION, ENGAGE, ANNULE, REFUSE, RUPTURE, SOLDE); not an enum, so a new upstream state is drift.
   */
  etat?: string;
  /**
   * Day of the last change upstream.
   */
  dateModification?: string;
  cerfa: {
    employeur?: {
      siret?: string;
      denomination?: string;
      [k: string]: unknown;
    };
    apprenti?: {
      nom?: string;
      prenom?: string;
      dateNaissance?: string;
      [k: string]: unknown;
    };
    contrat?: {
      dateDebutContrat?: string;
      dateFinContrat?: string;
      [k: string]: unknown;
    };
    formation?: {
      rncp?: string;
      intituleQualification?: string;
      [k: string]: unknown;
    };
    organismeFormation?: {
      siret?: string;
      [k: string]: unknown;
    };
    [k: string]: unknown;
  };
  echeances?: unknown[];
  detailsFacturation?: {
    [k: string]: unknown;
  };
  engagementsFraisAnnexe?: unknown[];
  [k: string]: unknown;
}
/**
 * SPEC 7: body of every error. Codes of SPEC 7, those of D5, and METHOD_NOT_ALLOWED (405) and UNSUPPORTED_MEDIA_TYPE (415) of P2, UNAUTHORIZED (401) of P9.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "ErrorBody".
 */
export interface ErrorBody {
  status: "error";
  code:
    | "VALIDATION_ERROR"
    | "HTTP_ERROR"
    | "NOT_FOUND"
    | "NOT_SUPPORTED"
    | "UPSTREAM_ERROR"
    | "TIMEOUT"
    | "NETWORK_ERROR"
    | "INTERNAL_ERROR"
    | "RATE_LIMITED"
    | "UPSTREAM_INVALID_RESPONSE"
    | "PAYLOAD_TOO_LARGE"
    | "CONFLICT"
    | "UNAVAILABLE"
    | "METHOD_NOT_ALLOWED"
    | "UNSUPPORTED_MEDIA_TYPE"
    | "UNAUTHORIZED";
  /**
   * Readable message.
   */
  description: string;
  /**
   * VALIDATION_ERROR: one entry per field problem, as '<dotted.path>: <message>'.
   */
  errors?: string[];
  /**
   * UPSTREAM_ERROR (and 403 from upstream, D8): the raw upstream body.
   */
  upstream?: unknown;
  /**
   * CONFLICT (D5): the sync already pending or processing.
   */
  syncId?: string;
  [k: string]: unknown;
}
/**
 * SPEC 2.2: one item of a dossier state page.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierEtat".
 */
export interface DossierEtat {
  numeroExterne?: string;
  numeroDeca?: string;
  numeroInterne: string;
  /**
   * SPEC 3.3: TRANSMIS, EN_COURS_INSTRUCTION, ENGAGE, ANNULE, REFUSE, RUPTURE, SOLDE. Not an enum so that a new upstream state is drift, not a broken client.
   */
  etat: string;
  [k: string]: unknown;
}
/**
 * SPEC 2.2: a page of dossier states (GET /{opcoId}/dossiers/etats).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierEtatsPage".
 */
export interface DossierEtatsPage {
  status: string;
  total?: number;
  count?: number;
  page?: number;
  EtatDossierResult: DossierEtat[];
  [k: string]: unknown;
}
/**
 * SPEC 4.6: query of GET /{opcoId}/dossiers/etats.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierEtatsQuery".
 */
export interface DossierEtatsQuery {
  anneeDossier?: string;
  /**
   * Results modified from that date.
   */
  dateModification?: string;
  numeroPage?: string;
}
/**
 * SPEC 4.9: body of POST /{opcoId}/factures. A top-level field the schema does not declare is refused (issue 38): it never reaches the upstream.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "FactureBody".
 */
export interface FactureBody {
  /**
   * Total amount including tax.
   */
  montantTotal: number;
  /**
   * CFA invoice number.
   */
  numero: string;
  dateEmission: string;
  ibanEmetteur: string;
  siretEmetteur: string;
  estCertificatRealisation?: boolean;
  /**
   * @minItems 1
   */
  lignes: [
    {
      montant: number;
      natureLigne: "PEDAGOGIE" | "MOBILITE" | "HEBERGEMENT" | "RESTAURATION" | "PREMIEREQUIPEMENT" | "MAJORATION_RQTH";
      quantite?: number;
      numeroEcheance?: number;
      codificationEcheance?: number;
      numeroDeca?: string;
      /**
       * Internal dossier number.
       */
      numeroDossier: string;
      [k: string]: unknown;
    },
    ...{
      montant: number;
      natureLigne: "PEDAGOGIE" | "MOBILITE" | "HEBERGEMENT" | "RESTAURATION" | "PREMIEREQUIPEMENT" | "MAJORATION_RQTH";
      quantite?: number;
      numeroEcheance?: number;
      codificationEcheance?: number;
      numeroDeca?: string;
      /**
       * Internal dossier number.
       */
      numeroDossier: string;
      [k: string]: unknown;
    }[]
  ];
  _files?: Files;
}
/**
 * SPEC 2.4: one item of an invoice state page.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "FactureEtat".
 */
export interface FactureEtat {
  numeroInterneFacture: string;
  referenceFactureCFA?: string;
  organismeFormation?: {
    siret?: string;
    IBAN?: string;
    [k: string]: unknown;
  };
  montantFacture?: number;
  /**
   * SPEC 3.4: TRANSMIS, EN_COURS_REGLEMENT, REGLE, BLOQUE, REFUSE, ANNULE, RELANCE. Not an enum so that a new upstream state is drift, not a broken client.
   */
  etatFacture: string;
  /**
   * Null until the invoice is paid (REGLE).
   */
  referenceVirement?: string | null;
  /**
   * Null until the invoice is paid (REGLE).
   */
  dateReglement?: string | null;
  commentaire?: string | null;
  dossiers?: {
    numeroInterneDossier?: string;
    numeroExterneDossier?: string;
    montant?: number;
    [k: string]: unknown;
  }[];
  [k: string]: unknown;
}
/**
 * SPEC 2.4: a page of invoice states (GET /{opcoId}/factures/etats).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "FactureEtatsPage".
 */
export interface FactureEtatsPage {
  status: string;
  total?: number;
  count?: number;
  page?: number;
  factures: FactureEtat[];
  [k: string]: unknown;
}
/**
 * SPEC 4.10: query of GET /{opcoId}/factures/etats.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "FactureEtatsQuery".
 */
export interface FactureEtatsQuery {
  anneeFacture?: string;
  numeroInterneDossier?: string;
  numeroExterneDossier?: string;
  referenceFactureCFA?: string;
  referenceVirement?: string;
  dateModification?: string;
  numeroPage?: string;
}
/**
 * SPEC 4.1: GET /health, the process answers.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Health".
 */
export interface Health {
  status: "ok";
}
/**
 * Instance -> hub: one upstream call waiting for a grant.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubAsk".
 */
export interface HubAsk {
  type: "ask";
  /**
   * Chosen by the instance, unique among its waiting asks.
   */
  askId: string;
  opcoId: string;
  method: "GET" | "POST";
  route: string;
  /**
   * SPEC 8: 1 client, 5 default, 10 sync and polling.
   */
  priority: number;
  /**
   * Hash of the CFA's X-API-KEY: CFA tenants of one priority take turns.
   */
  tenant: string;
  rateLimit: HubRateLimit;
  /**
   * False when the upstream has not accepted the CFA's key lately (issue 27): served from the unproven slice. Absent means proven; instances send it only when false, so a proven ask is one a hub of the previous version takes.
   */
  proven?: boolean;
}
/**
 * D28: an upstream budget, at most `limit` calls in any rolling `windowMs`.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubRateLimit".
 */
export interface HubRateLimit {
  limit: number;
  windowMs: number;
}
/**
 * Instance -> hub: an ask given up.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubCancel".
 */
export interface HubCancel {
  type: "cancel";
  askId: string;
}
/**
 * The hub's config file (D28): `opco-proxy hub --config FILE`. Secrets come from the environment only.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubConfigFile".
 */
export interface HubConfigFile {
  /**
   * Default 8090.
   */
  port?: number;
  /**
   * Default 0.0.0.0.
   */
  host?: string;
  /**
   * Holds the hub keys and the grant journal; default embedded.
   */
  store?: {
    type: "embedded" | "mongodb";
    path?: string;
    url?: string;
    database?: string;
  };
  /**
   * Two hubs on one shared MongoDB store, one leading under a lease, the other standing by (docs/hub.md, Failover). Absent: this hub leads alone, without a lease.
   */
  failover?: {
    /**
     * This hub's address as instances reach it, shown to operators as the leader's url.
     */
    url?: string;
    /**
     * How long a taken or renewed lease holds; default 10000.
     */
    leaseMs?: number;
    /**
     * How often the leader renews its lease, and a standby tries to take it; default 3000. At most a third of leaseMs.
     */
    renewMs?: number;
  };
  /**
   * The JWT `iss` of grants; default opco-proxy-hub.
   */
  issuer?: string;
  /**
   * The upstream budgets per opcoId; an opcoId not listed takes the limit its instances report.
   */
  opcos?: {
    [k: string]: {
      rateLimit: HubRateLimit;
    };
  };
  /**
   * Tuning of the adaptive limit (D28); defaults in adaptive-limit.ts.
   */
  adaptive?: {
    intervalMs?: number;
    minRequests?: number;
    /**
     * Effective limit kept after a window with too many upstream errors.
     */
    decreaseFactor?: number;
    /**
     * Of the configured limit, given back per calm interval.
     */
    increaseFraction?: number;
    /**
     * Of the configured limit, the floor of the effective limit.
     */
    minFraction?: number;
    /**
     * Share of 429 and 5xx answers above which the limit goes down.
     */
    errorRateThreshold?: number;
  };
  /**
   * Share of each budget's effective limit that asks of unproven CFA tenants share (issue 27); core's default.
   */
  unprovenShare?: number;
  /**
   * Per client address: failed authentications (wrong admin or hub keys) and the backoff after wrong admin keys; core's keys and defaults.
   */
  addressRateLimit?: {
    /**
     * Tokens per second (default 2).
     */
    perSecond?: number;
    /**
     * Bucket size (default 20).
     */
    burst?: number;
    /**
     * Wrong operator keys in a row before the address backs off (default 5).
     */
    freeFailures?: number;
    /**
     * Longest backoff after wrong operator keys (default 300).
     */
    maxBackoffS?: number;
  };
  /**
   * Proxies whose X-Forwarded-For is believed (addresses or CIDRs); the client address is the first hop from the right that none of them is.
   */
  trustedProxies?: string[];
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
}
/**
 * Instance -> hub: the call made with a grant ended.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubDone".
 */
export interface HubDone {
  type: "done";
  grantId: string;
  /**
   * `unused`: the grant came after its ask was given up; the hub frees its slot at once.
   */
  outcome: "used" | "unused";
  status?: number;
  latencyMs?: number;
}
/**
 * Hub -> instance: a message it could not take.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubError".
 */
export interface HubError {
  type: "error";
  message: string;
}
/**
 * Hub -> instance: the grant of an ask.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubGrant".
 */
export interface HubGrant {
  type: "grant";
  askId: string;
  grantId: string;
  /**
   * The HS256 JWT sent upstream as `Svc-Hub-Token`.
   */
  token: string;
  expiresInMs: number;
}
/**
 * Instance -> hub, first and once per connection. Unchanged since protocol 1, so a hub of any version takes it.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubHello".
 */
export interface HubHello {
  type: "hello";
  /**
   * Always 1: the hello has not changed; an instance asks for a later version in its socket URL (`&protocol=2`).
   */
  protocol: 1;
  instanceId: string;
  expectedInstances: number;
  /**
   * The rate limits the instance knows per opcoId (used for opcoIds the hub's config does not list).
   */
  limits: {
    [k: string]: HubRateLimit;
  };
  /**
   * @maxItems 100000
   */
  usage: HubUsageEntry[];
  /**
   * False when the instance had to leave entries out; the hub then frees nothing it cannot see.
   */
  complete: boolean;
}
/**
 * One upstream call the instance made recently, or is making; times are ages, so clocks may differ. No errorMessage here: ajv-errors rescans the errors so far for each item that has one, which made a hello of 100,000 bad entries take minutes.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubUsageEntry".
 */
export interface HubUsageEntry {
  /**
   * The grant id (JWT `jti`) for a call made with a grant; `local-…` for a call of the local bucket.
   */
  id: string;
  opcoId: string;
  startedAgoMs: number;
  /**
   * Absent while the call is still in flight.
   */
  endedAgoMs?: number;
}
/**
 * POST /admin/keys of the hub: a new hub key for one instance.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubKeyBody".
 */
export interface HubKeyBody {
  /**
   * The fleet the key's instances belong to: they share one budget per opcoId.
   */
  fleetId?: string;
  /**
   * The previous version's name of fleetId, still accepted.
   */
  tenantId?: string;
  /**
   * Shown in GET /admin/instances.
   */
  name: string;
}
/**
 * SPEC 1.1 step 9: one opcoId's 60-second window as the instance measured it.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubMetricsReport".
 */
export interface HubMetricsReport {
  requests: number;
  errors: number;
  /**
   * Upstream 429 answers.
   */
  rateLimited: number;
  averageLatencyMs: number;
}
/**
 * Instance -> hub: its 60-second windows per opcoId (SPEC 1.1 step 9).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubMetrics".
 */
export interface HubMetrics {
  type: "metrics";
  windows: {
    [k: string]: HubMetricsReport;
  };
}
/**
 * Hub -> instance: an ask the hub will not serve.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubRefused".
 */
export interface HubRefused {
  type: "refused";
  askId: string;
  message: string;
}
/**
 * Hub -> instance, the answer to a hello. Protocol 2 names the instance's fleet `fleetId`; a hub answers protocol 1 (`tenantId`, the same value) to an instance that did not ask for 2, and an instance reads both.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "HubWelcome".
 */
export interface HubWelcome {
  type: "welcome";
  protocol: 1 | 2;
  instanceId: string;
  /**
   * The fleet of the instance's hub key: the instances sharing one budget per opcoId.
   */
  fleetId?: string;
  /**
   * Protocol 1's name of fleetId, sent to and read from instances and hubs of the previous version.
   */
  tenantId?: string;
  /**
   * The hub pings this often; an instance that hears nothing for three periods reconnects.
   */
  heartbeatMs: number;
}
/**
 * SPEC 2.5: an asynchronous job (GET /{opcoId}/jobs/{jobId}).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Job".
 */
export interface Job2 {
  jobId: string;
  opcoId: string;
  type:
    | "post-dossier"
    | "post-facture"
    | "post-convention"
    | "post-certificat"
    | "post-document"
    | "sync-discovery"
    | "sync-batch";
  status: JobStatus;
  /**
   * Present when completed; upstream-defined (for example status, numeroInterne, comment).
   */
  result?: {
    [k: string]: unknown;
  };
  /**
   * Present when failed.
   */
  error?: {
    message: string;
    /**
     * An error code of SPEC 7, for example UPSTREAM_ERROR.
     */
    code: string;
    /**
     * Raw upstream body, when the upstream answered.
     */
    upstream?: unknown;
    /**
     * Failed step of a composite job.
     */
    step?: number;
  };
  retries: number;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /**
   * Composite jobs only.
   */
  currentStep?: number;
  /**
   * Composite jobs only.
   */
  totalSteps?: number;
  /**
   * Composite jobs only (D16).
   */
  steps?: {
    step: number;
    name: string;
    status: JobStatus;
    /**
     * Present when completed.
     */
    result?: {
      [k: string]: unknown;
    };
  }[];
}
/**
 * The operator's JSON config file (D2, D3). Secrets are never in it: they come from the environment.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "KernelConfig".
 */
export interface KernelConfig {
  /**
   * For editors only: the path or URL of this schema (the service ignores it).
   */
  $schema?: string;
  /**
   * Listening port (0: any free port)
   */
  port?: number;
  /**
   * The `worker` role only, which has no HTTP otherwise: serve GET /metrics on this port (on `host`), for Prometheus. Absent: no listener
   */
  metricsPort?: number;
  /**
   * Listening address
   */
  host?: string;
  /**
   * What a slow or greedy client may hold of the HTTP server (docs/operations.md, Slow clients). Over time: 408 in the error body, and the connection is closed.
   */
  server?: {
    /**
     * A request's headers must arrive whole within this time of its first byte (of the connection, for the first request)
     */
    headersTimeoutMs?: number;
    /**
     * The whole request, body included, must arrive within this time of its first byte; at least `headersTimeoutMs`. 25 MiB in 120 s takes 1.8 Mbit/s
     */
    requestTimeoutMs?: number;
    /**
     * A request body that sends nothing for this long while the service waits for it is over; so is one slower than `minBodyBytesPerSecond` once waited for this long
     */
    bodyIdleTimeoutMs?: number;
    /**
     * The least average rate of a request body, counted from `bodyIdleTimeoutMs` of waiting on; 0: none
     */
    minBodyBytesPerSecond?: number;
    /**
     * An idle kept-alive connection is closed after this long. Behind a load balancer, set it above the balancer's idle timeout (AWS ALB: 60 s, so 65000)
     */
    keepAliveTimeoutMs?: number;
    /**
     * Connections one client address (IPv6: its /64) may hold open at once; one more is answered 429 at once and closed. `trustedProxies` are not counted; 0: no cap
     */
    maxConnectionsPerAddress?: number;
  };
  /**
   * `development` allows `http://` and loopback webhook targets
   */
  mode?: "production" | "development";
  store?: {
    /**
     * embedded (in process), or the type of a store driver (mongodb).
     */
    type: "embedded";
    /**
     * Embedded store: a directory to keep data in; default in memory.
     */
    path?: string;
  };
  queue?: {
    /**
     * embedded (in process), or the type of a queue driver (rabbitmq).
     */
    type: "embedded";
  };
  /**
   * Feature plugins by short or package name; also `hub`, `console`, `otel`
   */
  plugins?: string[];
  publisher?: {
    /**
     * Sent upstream as the publisher headers (SPEC 5.1)
     */
    editeur?: string;
    /**
     * Sent upstream as the publisher headers (SPEC 5.1)
     */
    logiciel?: string;
    /**
     * Sent upstream as the publisher headers (SPEC 5.1)
     */
    version?: string;
  };
  opcos?: {
    /**
     * One upstream OPCO. Which authentication keys it needs (tokenUrl, clientId, clientSecretEnv, scope for OAuth client credentials; apiKeyEnv for a static API-key header) depends on its adapter's profile, whose strategy checks them at start-up.
     */
    [k: string]: {
      /**
       * Adapter by short (`common-api`, `classic-api`) or package name (adapters.md).
       */
      adapter: string;
      /**
       * Upstream base URL.
       */
      baseUrl: string;
      /**
       * OAuth token URL (the profile says which keys it needs).
       */
      tokenUrl?: string;
      /**
       * OAuth client id.
       */
      clientId?: string;
      /**
       * Variable holding the OAuth client secret.
       */
      clientSecretEnv?: string;
      /**
       * OAuth scope, when the upstream wants one.
       */
      scope?: string;
      rateLimit?: {
        /**
         * Upstream budget: calls per window; default the profile's.
         */
        limit: number;
        /**
         * Upstream budget: the window; default the profile's.
         */
        windowMs: number;
      };
      /**
       * Poller interval (at least 1000); default the profile's.
       */
      pollingIntervalMs?: number;
      /**
       * Per route (`"GET /dossiers": 60`): cache lifetime in seconds; default the profile's.
       */
      cacheTtlS?: {
        [k: string]: number;
      };
      /**
       * Environment variable holding the upstream API key (profiles authenticating with a static API-key header).
       */
      apiKeyEnv?: string;
      /**
       * Settings read by a custom authentication strategy of the adapter.
       */
      auth?: {
        [k: string]: unknown;
      };
    };
  };
  upstream?: {
    /**
     * Upstream call time limit
     */
    timeoutMs?: number;
    /**
     * Upstream answers larger than this are unusable (502 UPSTREAM_INVALID_RESPONSE).
     */
    maxAnswerBytes?: number;
  };
  limits?: {
    /**
     * Request body limit (D7)
     */
    bodyBytes?: number;
    /**
     * Decoded `_files` entry limit (D7)
     */
    fileBytes?: number;
    /**
     * Values a request body may hold, objects, arrays and scalars counted (issue 38); past it, 400 VALIDATION_ERROR
     */
    bodyValues?: number;
    /**
     * Fields of any one object of a request body (issue 38); past it, 400 VALIDATION_ERROR naming the object
     */
    objectKeys?: number;
    /**
     * Items of any one array of a request body (`lignes`, `objets`, `events`; issue 38); past it, 400 VALIDATION_ERROR naming the array
     */
    arrayItems?: number;
    /**
     * Bytes of a request body's JSON outside the contents of its `_files`, what is parsed at once (issue 38); past it, 413 PAYLOAD_TOO_LARGE
     */
    jsonBytes?: number;
  };
  tenantRateLimit?: {
    /**
     * Each tenant's own rate (D6)
     */
    perSecond?: number;
    /**
     * Each tenant's own rate (D6)
     */
    burst?: number;
  };
  /**
   * Tenant hashes allowed to use the service (D8)
   */
  allowedTenants?: string[];
  /**
   * What the upstream said of each tenant's key, per opcoId (issue 27, docs/decisions.md P13).
   */
  tenantKeys?: {
    /**
     * How long a key the upstream accepted stays proven (default 86400, a day).
     */
    provenTtlS?: number;
    /**
     * How long a key the upstream refused is answered 403 locally, without asking the upstream (default 300).
     */
    refusedTtlS?: number;
    /**
     * Share of each window's upstream budget that unproven tenants share while strangers are about (an unproven key was refused at that opcoId within strangersRememberedS), at least one call (default 0.1).
     */
    unprovenShare?: number;
    /**
     * Share of each window's upstream budget that unproven tenants share while no unproven key was refused lately, so a publisher onboarding its CFAs is not held to the narrow slice (default 0.5).
     */
    calmUnprovenShare?: number;
    /**
     * How long the refusal of an unproven key keeps the unproven slice at unprovenShare at that opcoId (default 600).
     */
    strangersRememberedS?: number;
    /**
     * 403s to distinct requests of a key the upstream accepted, none accepted between them, that hold the key refused when the profile's keyRefusal does not say so first (default 3).
     */
    forbiddenInARow?: number;
    /**
     * What the unproven tenants of one client address may keep stored; past a bound, 429 with Retry-After (P13).
     */
    unprovenHoldings?: {
      /**
       * Unfinished jobs (default 300).
       */
      jobs?: number;
      /**
       * Webhooks (default 400: 20 CFAs with D9's 20 each).
       */
      webhooks?: number;
      /**
       * Unfinished syncs (default 40).
       */
      syncs?: number;
      /**
       * Bytes of the stored files of their unfinished jobs (default 536870912, 512 MiB).
       */
      fileBytes?: number;
    };
  };
  /**
   * Per client address: requests of unproven tenants and failed authentications (token bucket), and the backoff after wrong operator keys.
   */
  addressRateLimit?: {
    /**
     * Tokens per second (default 2).
     */
    perSecond?: number;
    /**
     * Bucket size (default 20).
     */
    burst?: number;
    /**
     * Wrong operator keys in a row before the address backs off (default 5).
     */
    freeFailures?: number;
    /**
     * Longest backoff after wrong operator keys (default 300).
     */
    maxBackoffS?: number;
  };
  /**
   * Proxies whose X-Forwarded-For is believed (addresses or CIDRs); the client address is the first hop from the right that none of them is.
   */
  trustedProxies?: string[];
  /**
   * Audit records (D32): one per state-changing request and operator action.
   */
  audit?: {
    /**
     * How long records are kept (default 400).
     */
    retentionDays?: number;
    /**
     * Also record reads of personal data: GET dossiers and dossiers/liste (default false: a store write per read).
     */
    reads?: boolean;
    /**
     * Purge of records past their retention (default 3600000).
     */
    sweepIntervalMs?: number;
  };
  /**
   * Issue 42: every instance's counts minute by minute in the store (collection history), read by GET /admin/history.
   */
  history?: {
    /**
     * Record this instance's counts (default true: at most one store write per instance per minute, none in a minute that counted nothing).
     */
    enabled?: boolean;
    /**
     * How long minutes are kept, purged every hour (default 7).
     */
    retentionDays?: number;
  };
  /**
   * On SIGTERM, how long requests and jobs in flight may take to finish before the process stops (P3).
   */
  shutdownGraceMs?: number;
  /**
   * `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`
   */
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
}
/**
 * SPEC 4.7: query of GET /{opcoId}/dossiers/liste.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierListeQuery".
 */
export interface DossierListeQuery {
  /**
   * Comma-separated internal numbers, at most 50 (SPEC 8).
   */
  numerosInternes: string;
}
/**
 * SPEC 2.3: dossiers by internal numbers (GET /{opcoId}/dossiers/liste).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "DossierListe".
 */
export interface DossierListe {
  status: string;
  dossiers: Dossier[];
  /**
   * Requested internal numbers that were not found.
   */
  numerosInternesIntrouvables?: string[];
  [k: string]: unknown;
}
/**
 * P1, P3: GET /ready, 200 when the store and the queue answer and the process is not stopping; otherwise 503 UNAVAILABLE with the error body and Retry-After (D5).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Ready".
 */
export interface Ready {
  status: "ready";
  /**
   * Kind of store backend that answered, for example embedded or mongodb.
   */
  store: string;
  /**
   * Kind of queue backend that answered, for example embedded or rabbitmq.
   */
  queue: string;
}
/**
 * SPEC 4.3 and D13: GET /{opcoId}/status.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "OpcoStatus".
 */
export interface OpcoStatus {
  status: "healthy" | "degraded" | "unhealthy";
  /**
   * Versions of the upstream API.
   */
  supportedVersions: string[];
  /**
   * Seconds since the service started.
   */
  uptime: number;
}
/**
 * SPEC 4.14: 202 answer to POST /sync/dossiers.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "SyncAccepted".
 */
export interface SyncAccepted {
  syncId: string;
  status: "pending";
  /**
   * /sync/{syncId}
   */
  statusUrl: string;
}
/**
 * SPEC 4.14 and D19: body of POST /sync/dossiers.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "SyncBody".
 */
export interface SyncBody {
  opcoId: string;
  /**
   * Default: all years.
   */
  minYear?: number;
  /**
   * Start a poller once the sync completes (D21).
   */
  enablePoller?: boolean;
}
/**
 * SPEC 4.14: answer to DELETE /sync/{syncId}: cancelled, or the current state of an already finished sync with a message.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "SyncCancellation".
 */
export interface SyncCancellation {
  syncId: string;
  status: SyncStatus;
  message?: string;
}
/**
 * SPEC 4.15: body of POST /webhooks. HTTPS and the refusal of private targets (SPEC 5.6, D24) depend on the mode and on DNS, so the webhooks plugin checks them; the schema only requires an http(s) URL.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookCreateBody".
 */
export interface WebhookCreateBody {
  callbackUrl: CallbackUrl;
  events: EventList;
  description?: string;
}
/**
 * SPEC 2.7: a webhook subscription. secret and signingSecret are present only in the answer to its creation; createdAt is absent from the answer to PATCH (SPEC 4.15).
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "Webhook".
 */
export interface Webhook {
  id: string;
  callbackUrl: string;
  events: EventType[];
  /**
   * HMAC-SHA256 key of Svc-Signature, 64 hex characters.
   */
  secret?: string;
  active: boolean;
  description?: string;
  createdAt?: string;
  /**
   * The same key in the Standard Webhooks form (whsec_ + base64 of the 32 bytes secret encodes), for their libraries.
   */
  signingSecret?: string;
  /**
   * When the service switched it off after 5 days of failed deliveries (set active: true to turn it on again).
   */
  disabledAt?: string;
  disabledReason?: string;
}
/**
 * Body of POST /webhooks/{id}/recover: send again every failed delivery of the webhook since that time.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookRecoverBody".
 */
export interface WebhookRecoverBody {
  /**
   * ISO 8601 timestamp; deliveries created at or after it.
   */
  since: string;
}
/**
 * How many failed deliveries were put on their way again.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookRecovered".
 */
export interface WebhookRecovered {
  recovered: number;
}
/**
 * The answer to POST /webhooks/{id}/rotate-secret: the new secret, shown once. The previous one still signs (Svc-Signature-Previous, a second webhook-signature entry) until previousSecretExpiresAt.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookSecret".
 */
export interface WebhookSecret {
  id: string;
  secret: string;
  signingSecret: string;
  previousSecretExpiresAt: string;
}
/**
 * SPEC 4.15: body of PATCH /webhooks/{id}; only supplied fields change, at least one is needed.
 *
 * This interface was referenced by `SchemaTypes`'s JSON-Schema
 * via the `definition` "WebhookUpdateBody".
 */
export interface WebhookUpdateBody {
  callbackUrl?: CallbackUrl;
  events?: EventList;
  active?: boolean;
  description?: string;
}
