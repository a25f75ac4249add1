/**
 * The one mechanism that writes audit records (D32): the operation router calls `recorder()`
 * for every operation whose manifest entry has an `audit` property, and the recorder writes the
 * record of the request once its answer is decided, before it leaves. No handler writes one.
 *
 * What goes in is chosen so that nothing a client wrote can land in the record but what the
 * service checked: ids must have the shape of the ids the service makes (a client asking for
 * `/webhooks/<someone's NIR>` leaves no NIR behind), and an opcoId must be a configured one.
 */
import { operations, type AuditNote, type OperationId } from '@opco-proxy/schemas';
import { createError, type ServiceError } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import type { AuditEntry, AuditLog, AuditTargets } from './audit-log.js';

/** Job, sync and webhook ids are UUIDs; delivery ids 32 hex characters. */
const SERVICE_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/;
const TARGET_FIELDS = ['jobId', 'webhookId', 'deliveryId', 'syncId'] as const;

export interface AuditTrailOptions {
  log: AuditLog;
  /** `audit.reads`: reads of personal data are recorded too. */
  reads: boolean;
  /** Whether an opcoId is a configured one (only those are recorded). */
  knownOpco(opcoId: string): boolean;
  logger: Logger;
  counted(action: string, status: number): void;
  failed(action: string): void;
}

/** What the router knows when the answer is decided. */
export interface AuditedRequest {
  actor: 'tenant' | 'operator';
  tenant?: string;
  params: Record<string, string>;
  /** The request body's `opcoId` (a sync), when it has one. */
  bodyOpcoId?: unknown;
  requestId: string;
  clientAddress: string;
}

export interface AuditedAnswer {
  status: number;
  body?: unknown;
  error?: ServiceError;
  note?: AuditNote;
}

export type AuditRecorder = (request: AuditedRequest, answer: AuditedAnswer) => Promise<void>;

export class AuditTrail {
  constructor(private readonly options: AuditTrailOptions) {}

  /** The recorder of an operation, or undefined when its requests are not audited. */
  recorder(id: OperationId): AuditRecorder | undefined {
    const audit = (operations[id] as { audit?: { kind: 'change' | 'personal-read'; id?: 'webhookId' } }).audit;
    if (!audit || (audit.kind === 'personal-read' && !this.options.reads)) return undefined;
    const async = (operations[id] as { async?: boolean }).async === true;
    return async (request, answer) => {
      const entry = this.entry(id, audit.id, async, request, answer);
      const each = answer.note?.each ?? [];
      try {
        if (each.length === 0) await this.options.log.write(entry);
        else await this.options.log.writeMany(each.map((item) => this.itemEntry(entry, item)));
      } catch (err) {
        this.options.failed(id);
        this.options.logger.error(
          { err, requestId: request.requestId, action: id },
          'audit record could not be written: the request fails',
        );
        throw createError('UNAVAILABLE', 'the audit record of this request could not be written; retry later', {
          cause: err,
          headers: { 'Retry-After': '5' },
        });
      }
      this.options.counted(id, answer.status);
    };
  }

  /** One record of a bulk action: the request's, about one of its things. */
  private itemEntry(entry: AuditEntry, item: NonNullable<AuditNote['each']>[number]): AuditEntry {
    const targets: AuditTargets = {};
    keepId(targets, 'jobId', item.targets.jobId);
    const opcoId = item.opcoId !== undefined && this.options.knownOpco(item.opcoId) ? item.opcoId : undefined;
    const { opcoId: _requestOpco, ...rest } = entry;
    return {
      ...rest,
      tenant: tenantHash(item.tenant),
      ...(opcoId !== undefined && { opcoId }),
      targets,
    };
  }

  private entry(
    action: OperationId,
    idField: 'webhookId' | undefined,
    async: boolean,
    request: AuditedRequest,
    answer: AuditedAnswer,
  ): AuditEntry {
    const { params } = request;
    const body = answer.body && typeof answer.body === 'object' ? (answer.body as Record<string, unknown>) : {};
    const targets: AuditTargets = {};
    for (const source of [params, body, answer.note?.targets ?? {}] as Array<Record<string, unknown>>) {
      for (const field of TARGET_FIELDS) keepId(targets, field, source[field]);
      if (idField) keepId(targets, idField, source.id);
    }
    const opcoId = [params.opcoId, body.opcoId, request.bodyOpcoId, answer.note?.opcoId].find(
      (value): value is string => typeof value === 'string' && this.options.knownOpco(value),
    );
    const outcome: AuditEntry['outcome'] = { status: answer.status };
    if (answer.error) outcome.code = answer.error.code;
    else if (async) outcome.idempotency = answer.status === 200 ? 'duplicate' : 'new';
    const tenant = answer.note?.tenant ?? request.tenant;
    return {
      tenant: tenantHash(tenant),
      actor: request.actor,
      action,
      ...(opcoId !== undefined && { opcoId }),
      targets,
      outcome,
      requestId: request.requestId,
      clientAddress: request.clientAddress,
    };
  }
}

/** The tenant as a record names it: its key's hash, or null for anything that is not one. */
function tenantHash(tenant: string | undefined): string | null {
  return tenant !== undefined && /^[0-9a-f]{64}$/.test(tenant) ? tenant : null;
}

function keepId(targets: AuditTargets, field: keyof AuditTargets, value: unknown): void {
  if (targets[field] === undefined && typeof value === 'string' && SERVICE_ID.test(value)) targets[field] = value;
}
