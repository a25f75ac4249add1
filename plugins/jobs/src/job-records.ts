/**
 * Job records (SPEC 2.5, 3.1) in the Store. The record holds no secret and no personal data in
 * clear: the API key and the body are sealed (job-secrets.ts) in `inputs` until the job ends,
 * the files sealed apart. What the upstream
 * answered is kept as JSON text, never as nested documents: its shape is not ours to trust.
 * A worker works on a job only under its lease (the durable-work kit's LeasedRecords), so a dead
 * worker's job is taken over once the lease lapses and never run by two workers at once.
 */
import { type Clock, type HeldRecords, type Collection, type Filter, type Store } from '@opco-proxy/core';
import { LeasedRecords, type Claimed, type Leased } from '@opco-proxy/core/durable';
import { newestFirst, type Page, type PageRequest } from '@opco-proxy/core/durable';
import type { Job, JobStatus } from '@opco-proxy/schemas';
import type { StoredInputs } from './job-secrets.js';

export type { JobStatus };
export type StepStatus = JobStatus;
export type JobType = Exclude<Job['type'], 'sync-discovery' | 'sync-batch'>;

export interface JobStep {
  step: number;
  name: string;
  status: StepStatus;
  /** The upstream's answer to the step, as JSON text. */
  resultJson?: string;
  /** Upstream attempts made for this step (SPEC 8: at most 3). */
  attempts: number;
  /** The last call may have reached the upstream without an answer (crash, timeout). */
  uncertain?: boolean;
}

export interface JobErrorRecord {
  message: string;
  code: string;
  /** The upstream's error body, as JSON text. */
  upstreamJson?: string;
  step?: number;
}

export interface JobRecord extends Leased {
  tenant: string;
  opcoId: string;
  type: JobType;
  status: JobStatus;
  resultJson?: string;
  error?: JobErrorRecord;
  retries: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  steps: JobStep[];
  /** False from the job's end until its job.completed / job.failed event was emitted. */
  notified?: boolean;
  /** X-Request-Id of the submission, sent again with each of the job's upstream calls. */
  requestId?: string;
  /** W3C trace context of the submission (the otel plugin's parent span). */
  traceparent?: string;
  /** D17: the record is deleted 30 days (configurable) after the job ended. */
  expiresAt?: Date;
  /** Sealed API key and body, from submission until the write that ends the job. */
  inputs?: StoredInputs | null;
  /** The decoded size of its `_files`, when it has any. */
  fileBytes?: number;
  /** The client address of a tenant the upstream had not accepted yet at submission (core's HeldWork, P13). */
  heldFrom?: string;
  /** A failed job whose sealed inputs are kept so an operator can retry it, until then (P23). */
  retryableUntil?: Date;
  /** How many times operators sent it back to pending (issue 42). */
  operatorRetries?: number;
}

/** Which failed jobs an operator retries at once (POST /admin/jobs/retry). */
export interface FailedJobFilter {
  opcoId?: string;
  code?: string;
  failedSince?: string;
  failedUntil?: string;
}

const UNFINISHED_STATUSES: readonly JobStatus[] = ['pending', 'processing'];
const UNFINISHED = { status: { $in: UNFINISHED_STATUSES } };

/** A job's id is a random UUID as `submitJob` draws it: anything else names no job, unread. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isJobId(id: string): boolean {
  return JOB_ID.test(id);
}

/** The job as SPEC 2.5 shows it; composite fields only for jobs of more than one step. */
export function toResource(job: JobRecord): Job {
  const resource: Job = {
    jobId: job._id,
    opcoId: job.opcoId,
    type: job.type,
    status: job.status,
    retries: job.retries,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
  };
  if (job.status === 'completed') resource.result = parsed(job.resultJson) ?? {};
  if (job.status === 'failed' && job.error) resource.error = errorResource(job.error);
  if (job.steps.length > 1) {
    const current = job.steps.find((step) => step.status !== 'completed') ?? job.steps[job.steps.length - 1];
    resource.currentStep = current.step;
    resource.totalSteps = job.steps.length;
    // A step is not written as it starts: the job's being processed says the current one is.
    const shown = (step: JobStep): StepStatus =>
      job.status === 'processing' && step === current ? 'processing' : step.status;
    resource.steps = job.steps.map((step) =>
      step.status === 'completed'
        ? { step: step.step, name: step.name, status: step.status, result: parsed(step.resultJson) ?? {} }
        : { step: step.step, name: step.name, status: shown(step) },
    );
  }
  return resource;
}

export function errorResource(error: JobErrorRecord): NonNullable<Job['error']> {
  const { upstreamJson, ...rest } = error;
  return upstreamJson === undefined ? rest : { ...rest, upstream: parsed(upstreamJson) };
}

function parsed(text: string | undefined): Record<string, unknown> | undefined {
  return text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>);
}

export class JobRecords {
  private readonly jobs: Collection<JobRecord>;
  readonly leases: LeasedRecords<JobRecord>;

  constructor(
    store: Store,
    private readonly clock: Clock,
    owner: string,
  ) {
    this.jobs = store.collection<JobRecord>('jobs');
    this.leases = new LeasedRecords(this.jobs, clock, owner);
  }

  /**
   * Search hints, skipped by the embedded store (IndexOptions): there they would serve no query
   * and cost a tree update per write; the tenant one worse, as nedb keeps every job of a tenant
   * under one tree node (a fifth of the embedded job path's CPU, bench/RESULTS.md).
   */
  async prepare(): Promise<void> {
    await this.jobs.createIndex({ tenant: 1, opcoId: 1 });
    await this.jobs.createIndex({ status: 1, nextAttemptAt: 1 });
    // The sweep looks for ended jobs that still owe their event every minute.
    await this.jobs.createIndex({ notified: 1, completedAt: 1 });
    // The operator's counts and lists (P9).
    await this.jobs.createIndex({ status: 1, opcoId: 1, createdAt: -1 });
    // The backlog gauge's oldest unfinished job: an index seek on MongoDB, where the index above
    // leaves a sort of every unfinished job (FerretDB v1 sorts in its own process either way).
    await this.jobs.createIndex({ status: 1, createdAt: 1 });
    // What the unproven tenants of an address hold (HeldWork): looked at only for their submissions.
    await this.jobs.createIndex({ heldFrom: 1, status: 1 });
  }

  /** The jobs tenants hold: per client address of unproven tenants (P13), and per tenant (issue 38), for core's HeldWork. */
  held(tenantBound: HeldRecords['tenantBound']): HeldRecords {
    const holding = (address: string) => ({ heldFrom: address, ...UNFINISHED });
    return {
      kind: 'jobs',
      tenantBound,
      countOf: (tenant) => this.jobs.count({ tenant, ...UNFINISHED }),
      bytesOf: async (tenant) =>
        (await this.jobs.find({ tenant, ...UNFINISHED, fileBytes: { $gt: 0 } })).reduce(
          (sum, job) => sum + (job.fileBytes ?? 0),
          0,
        ),
      countFrom: (address) => this.jobs.count(holding(address)),
      bytesFrom: async (address) =>
        (await this.jobs.find({ ...holding(address), fileBytes: { $gt: 0 } })).reduce(
          (sum, job) => sum + (job.fileBytes ?? 0),
          0,
        ),
      tenantsFrom: async (address, limit) => [
        ...new Set((await this.jobs.find(holding(address), { limit })).map((job) => job.tenant)),
      ],
      unmark: (tenant) => this.jobs.updateMany({ tenant, heldFrom: { $exists: true } }, { $unset: { heldFrom: '' } }),
    };
  }

  insert(job: JobRecord): Promise<void> {
    return this.jobs.insertOne(job);
  }

  /** Undoes a submission the queue refused (SPEC 3.1: the stored job is discarded). */
  async discard(jobId: string): Promise<void> {
    await this.jobs.deleteOne({ _id: jobId });
  }

  get(jobId: string): Promise<JobRecord | null> {
    return this.jobs.findOne({ _id: jobId });
  }

  /** Only the tenant that created a job sees it (SPEC 4.13). */
  findForTenant(jobId: string, tenant: string, opcoId: string): Promise<JobRecord | null> {
    return this.jobs.findOne({ _id: jobId, tenant, opcoId });
  }

  /**
   * Takes the job's lease if it is unfinished, due, and nobody holds a live lease (not even this
   * worker). A first run is stamped `startedAt` in the claiming write; a later one (a retry, a
   * takeover) costs a second try without the stamp.
   */
  async claim(jobId: string, leaseMs: number): Promise<Claimed<JobRecord> | null> {
    const first = await this.leases.claim({ _id: jobId, ...UNFINISHED, startedAt: null }, leaseMs, {
      set: { status: 'processing', startedAt: this.clock.date() },
    });
    return first ?? this.leases.claim({ _id: jobId, ...UNFINISHED }, leaseMs, { set: { status: 'processing' } });
  }

  /** Unfinished jobs nobody holds, due at `dueBefore` or earlier: their queue message may be lost. */
  overdue(dueBefore: Date): Promise<JobRecord[]> {
    return this.leases.overdue(UNFINISHED, dueBefore);
  }

  /** When the oldest unfinished job was submitted (a metric: do the workers keep up?). */
  async oldestUnfinished(): Promise<Date | null> {
    const [oldest] = await this.jobs.find(UNFINISHED, { sort: { createdAt: 1 }, limit: 1 });
    return oldest ? oldest.createdAt : null;
  }

  /** Jobs that ended at `endedBefore` or earlier and still owe their job.completed / job.failed event. */
  unnotified(endedBefore: Date, limit = 500): Promise<JobRecord[]> {
    return this.jobs.find({ notified: false, completedAt: { $lte: endedBefore } }, { sort: { completedAt: 1 }, limit });
  }

  /** Every tenant's jobs, newest first, for operators (P9). */
  pageAll(filter: { status?: JobStatus; opcoId?: string }, page: PageRequest): Promise<Page<JobRecord>> {
    const where: Record<string, unknown> = {};
    if (filter.status) where.status = filter.status;
    if (filter.opcoId) where.opcoId = filter.opcoId;
    return newestFirst(this.jobs, where, 'createdAt', page);
  }

  /** How many jobs of an opcoId are kept in each status. */
  async countByStatus(opcoId: string): Promise<Record<JobStatus, number>> {
    const statuses: JobStatus[] = ['pending', 'processing', 'completed', 'failed'];
    const counts = await Promise.all(statuses.map((status) => this.jobs.count({ status, opcoId })));
    return Object.fromEntries(statuses.map((status, i) => [status, counts[i]])) as Record<JobStatus, number>;
  }

  /** A plain update: setting the flag twice is harmless, so it needs no atomic read-and-write. */
  async markNotified(jobId: string): Promise<void> {
    await this.jobs.updateMany({ _id: jobId, notified: false }, { $set: { notified: true } });
  }

  /** Failed jobs matching an operator's filter, oldest failure first (P23). */
  failed(filter: FailedJobFilter, limit: number): Promise<JobRecord[]> {
    const where: Filter = { status: 'failed' };
    if (filter.opcoId !== undefined) where.opcoId = filter.opcoId;
    if (filter.code !== undefined) where['error.code'] = filter.code;
    const endedAt: Record<string, Date> = {};
    if (filter.failedSince !== undefined) endedAt.$gte = new Date(filter.failedSince);
    if (filter.failedUntil !== undefined) endedAt.$lt = new Date(filter.failedUntil);
    if (Object.keys(endedAt).length > 0) where.completedAt = endedAt;
    return this.jobs.find(where, { sort: { completedAt: 1 }, limit });
  }

  /**
   * Sends a failed job back to pending for its first step not completed, with that step's
   * attempts starting over (D18: completed steps are skipped, an uncertain one stays marked so
   * the worker looks it up first). Null when the job was no longer that failure (another
   * operator retried it meanwhile). Its end owes its event again, so none is owed now.
   */
  retry(job: JobRecord): Promise<JobRecord | null> {
    const steps = job.steps.map((step) =>
      step.status === 'completed' ? step : { ...step, status: 'pending' as const, attempts: 0 },
    );
    return this.jobs.findOneAndUpdate(
      { _id: job._id, status: 'failed', completedAt: job.completedAt },
      {
        $set: { status: 'pending', steps, completedAt: null, nextAttemptAt: this.clock.date(), notified: true },
        $unset: { error: '', expiresAt: '', retryableUntil: '', resultJson: '' },
        $inc: { operatorRetries: 1 },
      },
    );
  }

  /** Failed jobs whose retry window has passed with their inputs still kept. */
  retryWindowPassed(limit = 500): Promise<JobRecord[]> {
    return this.jobs.find({ status: 'failed', retryableUntil: { $lte: this.clock.date() } }, { limit });
  }

  /** Forgets the inputs of a failed job whose retry window passed; false when it was retried meanwhile. */
  async dropInputs(job: JobRecord): Promise<boolean> {
    const matched = await this.jobs.updateMany(
      { _id: job._id, status: 'failed', retryableUntil: job.retryableUntil },
      { $unset: { inputs: '', retryableUntil: '' } },
    );
    return matched > 0;
  }

  sweepExpired(): Promise<number> {
    return this.jobs.sweepExpired(this.clock.date());
  }
}
