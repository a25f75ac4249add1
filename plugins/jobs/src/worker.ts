/**
 * The job worker (SPEC 3.1, D16, D18): takes a job's lease, runs its steps in order, skipping
 * those already completed, and records every move. A step is marked `processing` before its
 * upstream call, so a worker that finds it so after a crash knows the call may have gone out
 * and, where the upstream allows a lookup, checks before sending again (job-recovery.ts). Once
 * the upstream has accepted a step, what it answered is recorded whatever the store does
 * meanwhile: the write is retried, never turned into a failure of the step.
 */
import { asServiceError, isUnavailable, LeaseLost, PRIORITY, settlesBy, randomHex, truncatedText, type Claimed, type Clock, type Consumer, type Logger, type OpcoDirectory, type Pipeline, type PluginApi, type Queue, type RetryPolicy, type ServiceError } from '@opco-proxy/core';
import { jobResultJson, stepCall } from './job-plan.js';
import type { JobErrorRecord, JobRecord, JobRecords, JobStep } from './job-records.js';
import { mayHaveReachedUpstream, nextMove } from './retry-policy.js';
import { findExistingDossier } from './job-recovery.js';
import { JOBS_QUEUE } from './submission.js';
import type { JobInputs, JobSecrets } from './job-secrets.js';
import { emitJobEnd, emitProgress } from './job-events.js';

export interface WorkerDeps {
  records: JobRecords;
  secrets: JobSecrets;
  queue: Queue;
  opcos: OpcoDirectory;
  pipeline: Pipeline;
  emit: PluginApi['emit'];
  log: Logger;
  clock: Clock;
  retries: RetryPolicy;
  leaseMs: number;
  retentionMs: number;
  prefetch: number;
  jobsEnded: { inc(labels: { type: string; status: string }): void };
}

/** Waits between two tries of recording what the upstream answered while the store is down. */
const RECORD_RETRY_MS = [200, 500, 1000, 2000, 5000];

export class JobWorker {
  readonly owner = randomHex(8);
  private consumer?: Consumer;
  /** Leases of the runs in progress, released if the process must stop before they end. */
  private readonly running = new Map<string, string>();

  constructor(private readonly deps: WorkerDeps) {}

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<{ jobId: string }>(JOBS_QUEUE, (message) => this.handle(message.body.jobId, message.redelivered), {
      prefetch: this.deps.prefetch,
    });
  }

  /**
   * Stops taking jobs and lets the running ones finish until `deadline`; those still running
   * then are handed back (lease released, step left `processing`, so the next worker checks the
   * upstream before sending again, D18).
   */
  async stop(deadline: number): Promise<void> {
    if (await settlesBy(this.deps.clock, deadline, this.consumer?.cancel())) return;
    for (const [jobId, token] of this.running) {
      await this.deps.records.leases.release(jobId, token).catch(() => undefined);
      this.deps.log.warn({ jobId }, 'job handed back at shutdown; another worker resumes it');
    }
  }

  /** Resolving acknowledges the message; throwing hands it back to the queue for later. */
  async handle(jobId: string, redelivered: boolean): Promise<void> {
    const { records, leaseMs } = this.deps;
    const claimed = await records.claim(jobId, leaseMs);
    if (!claimed) return this.unclaimed(jobId, redelivered);
    this.running.set(jobId, claimed.token);
    try {
      await records.leases.hold(jobId, claimed.token, leaseMs, () => this.run(claimed));
    } catch (err) {
      if (err instanceof LeaseLost) return this.deps.log.warn({ jobId }, 'lease lost; another worker has the job');
      await records.leases.release(jobId, claimed.token).catch(() => {});
      throw err;
    } finally {
      this.running.delete(jobId);
    }
  }

  /** A message for a job we could not claim: finished (maybe owing its event), early, or held by a live worker. */
  private async unclaimed(jobId: string, redelivered: boolean): Promise<void> {
    const { records, clock } = this.deps;
    const job = await records.get(jobId);
    if (!job) return;
    if (job.status === 'completed' || job.status === 'failed') return emitJobEnd(this.deps, job);
    const leased = job.leaseUntil && job.leaseUntil.getTime() > clock.now();
    // An early message (a duplicate): the retry's own time has not come.
    if (!leased && job.nextAttemptAt.getTime() > clock.now()) return this.requeue(jobId, job.nextAttemptAt.getTime() - clock.now());
    // Redelivered while another lease is live: its holder may have died; come back when it lapses.
    if (redelivered) throw new Error(`job ${jobId} is leased by another worker`);
  }

  async requeue(jobId: string, delayMs = 0): Promise<void> {
    await this.deps.queue.publish(JOBS_QUEUE, { jobId }, { priority: PRIORITY.client, delayMs: Math.max(0, delayMs) });
  }

  private async run({ record, token }: Claimed<JobRecord>): Promise<void> {
    let job = record;
    const inputs = await this.deps.secrets.get(job._id);
    if (!inputs) return this.finish(job, token, { message: 'the job inputs are gone (expired or purged)', code: 'INTERNAL_ERROR' });
    if (!job.startedAt) job = await this.deps.records.leases.update(job._id, token, { startedAt: this.deps.clock.date() });
    for (const step of job.steps) {
      if (step.status === 'completed') continue;
      const moved = await this.runStep(job, token, step, inputs);
      if (!moved) return;
      job = moved;
      if (job.steps.length > 1) await emitProgress(this.deps, job, step.step);
    }
    await this.finish(job, token);
  }

  /** Returns the job with the step completed, or null when the job was rescheduled or failed. */
  private async runStep(job: JobRecord, token: string, step: JobStep, inputs: JobInputs): Promise<JobRecord | null> {
    const uncertain = step.status === 'processing' || step.uncertain === true;
    const attempts = step.attempts + 1;
    job = await this.setStep(job, token, step.step, { status: 'processing', attempts, uncertain: true });
    let result: unknown;
    try {
      const call = stepCall(job.type, step, job.steps, inputs);
      const tenant = { hash: job.tenant, apiKey: inputs.apiKey };
      const found = uncertain ? await findExistingDossier(this.deps, job.opcoId, call, tenant) : null;
      result = found ?? (await this.deps.pipeline.run(
        this.deps.opcos.context(job.opcoId, call.route, tenant, { body: call.body, files: call.files, priority: PRIORITY.client, requestId: job._id }),
      ));
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      await this.stepFailed(job, token, step.step, attempts, asServiceError(err));
      return null;
    }
    return this.recordStep(job, token, step.step, JSON.stringify(result ?? {}));
  }

  /** The upstream accepted the step: record its answer, retrying the store, never failing the step for it. */
  private async recordStep(job: JobRecord, token: string, stepNumber: number, resultJson: string): Promise<JobRecord> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.setStep(job, token, stepNumber, { status: 'completed', resultJson, uncertain: false });
      } catch (err) {
        if (err instanceof LeaseLost) throw err;
        if (!isUnavailable(err) && attempt >= 2) {
          // Refused for what it is, not for an outage: keep a cut-down copy rather than lose the outcome.
          resultJson = JSON.stringify({ upstreamAnswer: truncatedText(resultJson) });
        }
        this.deps.log.warn({ jobId: job._id, step: stepNumber, err }, 'the upstream accepted the step but it could not be recorded yet; retrying');
        await this.deps.clock.sleep(RECORD_RETRY_MS[Math.min(attempt, RECORD_RETRY_MS.length - 1)]!);
      }
    }
  }

  private async stepFailed(job: JobRecord, token: string, stepNumber: number, attempts: number, error: ServiceError): Promise<void> {
    const move = nextMove(error, attempts, this.deps.retries);
    const uncertain = mayHaveReachedUpstream(error);
    if (move.kind === 'fail') {
      job = await this.setStep(job, token, stepNumber, { status: 'failed', uncertain });
      const failure: JobErrorRecord = { message: error.message, code: error.code, ...(error.upstream !== undefined && { upstreamJson: JSON.stringify(error.upstream) }) };
      return this.finish(job, token, job.steps.length > 1 ? { ...failure, step: stepNumber } : failure);
    }
    // A wait for budget is not an attempt; a retry is, and counts in `retries`.
    const step = move.kind === 'wait' ? { status: 'pending' as const, attempts: attempts - 1, uncertain } : { status: 'failed' as const, uncertain };
    // Scheduled and released in one write, then published: a message arriving before the lease
    // is dropped would find the job still held and be lost; if the publish fails, the overdue
    // sweep re-queues the job.
    const nextAttemptAt = new Date(this.deps.clock.now() + move.delayMs);
    const steps = job.steps.map((s) => (s.step === stepNumber ? { ...s, ...step } : s));
    await this.deps.records.leases.release(job._id, token, { steps, nextAttemptAt, ...(move.kind === 'retry' && { retries: job.retries + 1 }) });
    this.deps.log.info({ jobId: job._id, step: stepNumber, code: error.code, move }, 'job step rescheduled');
    await this.requeue(job._id, move.delayMs);
  }

  private async finish(job: JobRecord, token: string, error?: JobErrorRecord): Promise<void> {
    const now = this.deps.clock.date();
    const end = error
      ? { status: 'failed' as const, error, completedAt: now }
      : { status: 'completed' as const, resultJson: jobResultJson(job.steps), completedAt: now };
    const ended = await this.deps.records.leases.update(job._id, token, {
      ...end, leaseOwner: null, leaseUntil: null, notified: false, expiresAt: new Date(now.getTime() + this.deps.retentionMs),
    });
    await this.deps.secrets.purge(job._id);
    this.deps.log.info({ jobId: job._id, status: ended.status, worker: this.owner }, 'job ended');
    this.deps.jobsEnded.inc({ type: ended.type, status: ended.status });
    await emitJobEnd(this.deps, ended);
  }

  private setStep(job: JobRecord, token: string, stepNumber: number, changes: Partial<JobStep>): Promise<JobRecord> {
    const steps = job.steps.map((step) => (step.step === stepNumber ? { ...step, ...changes } : step));
    return this.deps.records.leases.update(job._id, token, { steps }, { renewMs: this.deps.leaseMs });
  }
}
