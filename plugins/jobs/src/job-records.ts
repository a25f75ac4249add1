/**
 * Job records (SPEC 2.5, 3.1) in the Store. The record holds no secret and no personal data:
 * the API key, the body and the files are sealed apart (job-secrets.ts). A worker works on a
 * job only while it holds its lease, renewed as it goes, so a dead worker's job is taken over
 * once the lease lapses and never run by two workers at once.
 */
import type { Collection, Store } from '@opco-proxy/core';

export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type StepStatus = 'pending' | 'processing' | 'completed' | 'failed';
export type JobType = 'post-dossier' | 'post-facture' | 'post-convention' | 'post-certificat' | 'post-document';

export interface JobStep {
  step: number;
  name: string;
  status: StepStatus;
  result?: unknown;
  /** Upstream attempts made for this step (SPEC 8: at most 3). */
  attempts: number;
  /** The last call may have reached the upstream without an answer (crash, timeout). */
  uncertain?: boolean;
}

export interface JobError {
  message: string;
  code: string;
  upstream?: unknown;
  step?: number;
}

export interface JobRecord {
  _id: string;
  tenant: string;
  opcoId: string;
  type: JobType;
  status: JobStatus;
  result?: unknown;
  error?: JobError;
  retries: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  steps: JobStep[];
  leaseOwner?: string | null;
  leaseUntil?: Date | null;
  /** Set while the job waits for a retry: no worker takes it earlier. */
  nextAttemptAt?: Date | null;
  /** False from the job's end until its job.completed / job.failed event was emitted. */
  notified?: boolean;
  /** D17: the record is deleted 30 days (configurable) after the job ended. */
  expiresAt?: Date;
}

/** The job as SPEC 2.5 shows it; composite fields only for jobs of more than one step. */
export function toResource(job: JobRecord): Record<string, unknown> {
  const resource: Record<string, unknown> = {
    jobId: job._id,
    opcoId: job.opcoId,
    type: job.type,
    status: job.status,
    retries: job.retries,
    createdAt: job.createdAt.toISOString(),
    startedAt: job.startedAt?.toISOString() ?? null,
    completedAt: job.completedAt?.toISOString() ?? null,
  };
  if (job.status === 'completed') resource.result = job.result ?? {};
  if (job.status === 'failed' && job.error) resource.error = job.error;
  if (job.steps.length > 1) {
    const current = job.steps.find((step) => step.status !== 'completed') ?? job.steps[job.steps.length - 1];
    resource.currentStep = current.step;
    resource.totalSteps = job.steps.length;
    resource.steps = job.steps.map(({ step, name, status, result }) => (status === 'completed' ? { step, name, status, result } : { step, name, status }));
  }
  return resource;
}

export class JobRecords {
  readonly jobs: Collection<JobRecord>;

  constructor(store: Store) {
    this.jobs = store.collection<JobRecord>('jobs');
  }

  async prepare(): Promise<void> {
    await this.jobs.createIndex({ tenant: 1, opcoId: 1 });
    await this.jobs.createIndex({ status: 1, leaseUntil: 1 });
    // The sweep looks for ended jobs that still owe their event every minute.
    await this.jobs.createIndex({ notified: 1, completedAt: 1 });
  }

  /** Only the tenant that created a job sees it (SPEC 4.13). */
  findForTenant(jobId: string, tenant: string, opcoId: string): Promise<JobRecord | null> {
    return this.jobs.findOne({ _id: jobId, tenant, opcoId });
  }

  /**
   * Takes the job's lease if it is unfinished, due, and nobody holds a live lease — not even the
   * caller: a duplicate message reaching the worker that is running the job must not start it twice.
   */
  claim(jobId: string, owner: string, leaseMs: number): Promise<JobRecord | null> {
    const now = new Date();
    return this.jobs.findOneAndUpdate(
      {
        _id: jobId,
        status: { $in: ['pending', 'processing'] },
        $and: [
          { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
          { $or: [{ nextAttemptAt: null }, { nextAttemptAt: { $exists: false } }, { nextAttemptAt: { $lte: now } }] },
        ],
      },
      { $set: { status: 'processing', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), nextAttemptAt: null } },
    );
  }

  /** Unfinished jobs, due for `graceMs`, that no worker holds: their queue message may be lost. */
  overdue(graceMs: number, limit = 500): Promise<JobRecord[]> {
    const now = Date.now();
    const before = new Date(now - graceMs);
    return this.jobs.find(
      {
        status: { $in: ['pending', 'processing'] },
        $and: [
          { $or: [{ leaseUntil: null }, { leaseUntil: { $lte: new Date(now) } }] },
          { $or: [{ nextAttemptAt: { $lte: before } }, { $and: [{ $or: [{ nextAttemptAt: null }, { nextAttemptAt: { $exists: false } }] }, { createdAt: { $lte: before } }] }] },
        ],
      },
      { sort: { createdAt: 1 }, limit },
    );
  }

  /**
   * Jobs that ended `graceMs` ago or more and still owe their job.completed / job.failed event:
   * the worker stopped between recording the end and emitting it.
   */
  unnotified(graceMs: number, limit = 500): Promise<JobRecord[]> {
    return this.jobs.find({ notified: false, completedAt: { $lte: new Date(Date.now() - graceMs) } }, { sort: { completedAt: 1 }, limit });
  }

  /** Writes under the lease: a worker that lost its lease cannot overwrite its successor's work. */
  async update(jobId: string, owner: string, set: Partial<JobRecord> & Record<string, unknown>, leaseMs?: number): Promise<JobRecord> {
    const fields: Record<string, unknown> = { ...set };
    if (leaseMs !== undefined) fields.leaseUntil = new Date(Date.now() + leaseMs);
    const updated = await this.jobs.findOneAndUpdate({ _id: jobId, leaseOwner: owner }, { $set: fields });
    if (!updated) throw new LeaseLost(jobId);
    return updated;
  }

  async release(jobId: string, owner: string): Promise<void> {
    await this.jobs.findOneAndUpdate({ _id: jobId, leaseOwner: owner }, { $set: { leaseOwner: null, leaseUntil: null } });
  }
}

export class LeaseLost extends Error {
  constructor(jobId: string) {
    super(`lease on job ${jobId} was lost`);
    this.name = 'LeaseLost';
  }
}
