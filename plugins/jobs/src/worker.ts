/**
 * The job worker (SPEC 3.1, D16, D18): takes a job's lease, runs its steps in order, skipping
 * those already completed, and records every move. A step is marked `processing` before its
 * upstream call, so a worker that finds it so after a crash knows the call may have gone out
 * and, where the upstream allows a lookup, checks before sending again (job-recovery.ts).
 */
import { randomHex, asServiceError, PRIORITY, type Consumer, type Logger, type OpcoRegistry, type Pipeline, type PluginApi, type Queue, type ServiceError } from '@opco-proxy/core';
import { jobResult, stepCall } from './job-plan.js';
import { LeaseLost, type JobRecord, type JobRecords, type JobStep } from './job-records.js';
import { mayHaveReachedUpstream, nextMove } from './retry-policy.js';
import { findExistingDossier } from './job-recovery.js';
import { JOBS_QUEUE } from './submission.js';
import type { JobInputs, JobSecrets } from './job-secrets.js';
import { emitJobEnd, emitProgress } from './job-events.js';

export interface WorkerDeps {
  records: JobRecords;
  secrets: JobSecrets;
  queue: Queue;
  opcos: OpcoRegistry;
  pipeline: Pipeline;
  emit: PluginApi['emit'];
  log: Logger;
  prometheus: PluginApi['prometheus'];
  backoffMs: number[];
  leaseMs: number;
  retentionMs: number;
  prefetch: number;
}

export class JobWorker {
  readonly owner = randomHex(8);
  private consumer?: Consumer;

  constructor(private readonly deps: WorkerDeps) {}

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<{ jobId: string }>(JOBS_QUEUE, (message) => this.handle(message.body.jobId, message.redelivered), {
      prefetch: this.deps.prefetch,
    });
  }

  async stop(): Promise<void> {
    await this.consumer?.cancel();
  }

  /** Resolving acknowledges the message; throwing hands it back to the queue for later. */
  async handle(jobId: string, redelivered: boolean): Promise<void> {
    const { records, leaseMs } = this.deps;
    // One lease token per run: two runs of one job in this worker can never write for each other.
    const lease = `${this.owner}:${randomHex(4)}`;
    const job = await records.claim(jobId, lease, leaseMs);
    if (!job) return this.unclaimed(jobId, redelivered);
    const renewal = setInterval(() => {
      records.update(jobId, lease, {}, leaseMs).catch(() => clearInterval(renewal));
    }, Math.max(50, Math.floor(leaseMs / 3)));
    try {
      await this.run(job);
    } catch (err) {
      if (err instanceof LeaseLost) return this.deps.log.warn({ jobId }, 'lease lost; another worker has the job');
      await records.release(jobId, lease).catch(() => {});
      throw err;
    } finally {
      clearInterval(renewal);
    }
  }

  /** A message for a job we could not claim: finished (maybe owing its event) or held by a live worker. */
  private async unclaimed(jobId: string, redelivered: boolean): Promise<void> {
    const job = await this.deps.records.jobs.findOne({ _id: jobId });
    if (!job) return;
    if (job.status === 'completed' || job.status === 'failed') return emitJobEnd(this.deps, job);
    const leased = job.leaseUntil && job.leaseUntil > new Date();
    if (!leased && job.nextAttemptAt && job.nextAttemptAt > new Date()) {
      // An early message (a duplicate): the retry's own time has not come.
      return this.requeue(jobId, job.nextAttemptAt.getTime() - Date.now());
    }
    // Redelivered while another lease is live: its holder may have died; come back when it lapses.
    if (redelivered) throw new Error(`job ${jobId} is leased by another worker`);
  }

  async requeue(jobId: string, delayMs = 0): Promise<void> {
    await this.deps.queue.publish(JOBS_QUEUE, { jobId }, { priority: PRIORITY.client, delayMs: Math.max(0, delayMs) });
  }

  private async run(job: JobRecord): Promise<void> {
    const { records, secrets } = this.deps;
    const inputs = await secrets.get(job._id);
    if (!inputs) return this.finish(job, { message: 'the job inputs are gone (expired or purged)', code: 'INTERNAL_ERROR' });
    if (!job.startedAt) job = await records.update(job._id, leaseOf(job), { startedAt: new Date() });
    for (const step of job.steps) {
      if (step.status === 'completed') continue;
      const moved = await this.runStep(job, step, inputs);
      if (!moved) return;
      job = moved;
      if (job.steps.length > 1) await emitProgress(this.deps, job, step.step);
    }
    await this.finish(job);
  }

  /** Returns the job with the step completed, or null when the job was rescheduled or failed. */
  private async runStep(job: JobRecord, step: JobStep, inputs: JobInputs): Promise<JobRecord | null> {
    const uncertain = step.status === 'processing' || step.uncertain === true;
    const attempts = step.attempts + 1;
    job = await this.setStep(job, step.step, { status: 'processing', attempts, uncertain: true });
    try {
      const call = stepCall(job.type, step, job.steps, inputs);
      const tenant = { hash: job.tenant, apiKey: inputs.apiKey };
      const found = uncertain ? await findExistingDossier(this.deps, job.opcoId, call, tenant) : null;
      const result = found ?? (await this.deps.pipeline.run(
        this.deps.opcos.context(job.opcoId, call.route, tenant, { body: call.body, files: call.files, priority: PRIORITY.client }),
      ));
      return await this.setStep(job, step.step, { status: 'completed', result: result ?? {}, uncertain: false });
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      await this.stepFailed(job, step.step, attempts, asServiceError(err));
      return null;
    }
  }

  private async stepFailed(job: JobRecord, stepNumber: number, attempts: number, error: ServiceError): Promise<void> {
    const move = nextMove(error, attempts, this.deps.backoffMs);
    const uncertain = mayHaveReachedUpstream(error);
    if (move.kind === 'fail') {
      job = await this.setStep(job, stepNumber, { status: 'failed', uncertain });
      const failure = { message: error.message, code: error.code, ...(error.upstream !== undefined && { upstream: error.upstream }) };
      return this.finish(job, job.steps.length > 1 ? { ...failure, step: stepNumber } : failure);
    }
    // A wait for budget is not an attempt; a retry is, and counts in `retries`.
    const step = move.kind === 'wait' ? { status: 'pending' as const, attempts: attempts - 1, uncertain } : { status: 'failed' as const, uncertain };
    // Scheduled and released in one write, then published: a message arriving before the lease
    // is dropped would find the job still held and be lost; if the publish fails, the overdue
    // sweep re-queues the job.
    const nextAttemptAt = new Date(Date.now() + move.delayMs);
    const released = { nextAttemptAt, leaseOwner: null, leaseUntil: null };
    await this.setStep(job, stepNumber, step, { ...released, ...(move.kind === 'retry' && { retries: job.retries + 1 }) });
    this.deps.log.info({ jobId: job._id, step: stepNumber, code: error.code, move }, 'job step rescheduled');
    await this.requeue(job._id, move.delayMs);
  }

  private async finish(job: JobRecord, error?: { message: string; code: string; upstream?: unknown; step?: number }): Promise<void> {
    const now = new Date();
    const end = error
      ? { status: 'failed' as const, error, completedAt: now }
      : { status: 'completed' as const, result: jobResult(job.steps), completedAt: now };
    const ended = await this.deps.records.update(job._id, leaseOf(job), {
      ...end, leaseOwner: null, leaseUntil: null, notified: false, expiresAt: new Date(now.getTime() + this.deps.retentionMs),
    });
    await this.deps.secrets.purge(job._id);
    this.deps.log.info({ jobId: job._id, status: ended.status, worker: this.owner }, 'job ended');
    this.deps.prometheus.jobsEnded.inc({ type: ended.type, status: ended.status });
    await emitJobEnd(this.deps, ended);
  }

  private setStep(job: JobRecord, stepNumber: number, changes: Partial<JobStep>, extra: Partial<JobRecord> = {}): Promise<JobRecord> {
    const steps = job.steps.map((step) => (step.step === stepNumber ? { ...step, ...changes } : step));
    const renew = extra.leaseOwner === null ? undefined : this.deps.leaseMs;
    return this.deps.records.update(job._id, leaseOf(job), { steps, ...extra }, renew);
  }
}

/** The lease token the job was claimed with (records returned under a lease carry it). */
function leaseOf(job: JobRecord): string {
  return job.leaseOwner ?? '';
}
