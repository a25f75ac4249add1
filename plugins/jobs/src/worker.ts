/**
 * The job worker (SPEC 3.1, D16, D18): takes a job's lease, runs its steps in order, skipping
 * those already completed, and records every outcome. A step is not written as it starts: the
 * claim says a run began, and a worker that claims a job whose lease another run left behind
 * (it died, or gave the job up at shutdown: `takenOver`) knows that run's call may have gone out
 * and, where the upstream allows a lookup, checks before sending again (job-recovery.ts). So a
 * single-step job costs three writes: the claim, the one that records the answer and ends the
 * job, and the note that its event went out. Once the upstream has accepted a step, what it
 * answered is recorded whatever the store does meanwhile: the write is retried, never turned into
 * a failure of the step.
 */
import {
  asServiceError,
  isRetriedByWorkers,
  isUnavailable,
  PRIORITY,
  settlesBy,
  randomHex,
  truncatedText,
  type Clock,
  type Consumer,
  type Logger,
  type OpcoDirectory,
  type Pipeline,
  type PluginApi,
  type Queue,
  type ServiceError,
} from '@opco-proxy/core';
import { LeaseLost, overShareDelayMs, TenantSlots, type Claimed, type RetryPolicy } from '@opco-proxy/core/durable';
import { jobResultJson, stepCall } from './job-plan.js';
import type { JobErrorRecord, JobRecord, JobRecords, JobStep } from './job-records.js';
import { mayHaveReachedUpstream, nextMove } from './step-failure.js';
import { findExistingDossier } from './job-recovery.js';
import { JOBS_QUEUE } from './submission.js';
import type { JobSecrets, OpenedInputs } from './job-secrets.js';
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
  /** `jobs.retryWindowHours`: a failed job's inputs are kept that long for an operator's retry (P23). */
  retryWindowMs: number;
  prefetch: number;
  /** Share of `prefetch` one tenant's jobs may hold at once (`jobs.tenantShare`). */
  tenantShare?: number;
  jobsEnded: { inc(labels: { opco: string; type: string; status: string }): void };
}

/** Waits between two tries of recording what the upstream answered while the store is down. */
const RECORD_RETRY_MS = [200, 500, 1000, 2000, 5000];

/** A job's queue message: its id, and its tenant so that a worker can share its slots before claiming it. */
export interface JobMessage {
  jobId: string;
  tenant?: string;
  /** How many times a worker turned it back because its tenant held its share of the slots. */
  turns?: number;
}

export class JobWorker {
  readonly owner = randomHex(8);
  private consumer?: Consumer;
  /** Leases of the runs in progress, released if the process must stop before they end. */
  private readonly running = new Map<string, string>();
  /** Aborted when the process stops and its grace has run out: waits inside a run end at once. */
  private readonly givenUp = new AbortController();
  /** One tenant's jobs hold at most a share of the worker's slots (D11 between tenants, issue 38). */
  private readonly slots: TenantSlots;

  constructor(private readonly deps: WorkerDeps) {
    this.slots = new TenantSlots(deps.prefetch, deps.tenantShare ?? 1, deps.clock);
  }

  async start(): Promise<void> {
    this.consumer = await this.deps.queue.consume<JobMessage>(
      JOBS_QUEUE,
      (message) => this.take(message.body, message.redelivered),
      {
        prefetch: this.deps.prefetch,
      },
    );
  }

  /** A job over its tenant's share of the slots that found none of them free in time goes back to the queue for a moment (TenantSlots). */
  private async take(message: JobMessage, redelivered: boolean): Promise<void> {
    const ran = await this.slots.run(message.tenant, () => this.handle(message.jobId, redelivered));
    if (!ran) {
      const turns = (message.turns ?? 0) + 1;
      await this.deps.queue.publish(
        JOBS_QUEUE,
        { ...message, turns },
        { priority: PRIORITY.normal, delayMs: overShareDelayMs(turns - 1) },
      );
    }
  }

  /**
   * Stops taking jobs and lets the running ones finish until `deadline`; those still running
   * then are given up as if this worker had died (the lease lapses now), so the next worker
   * checks the upstream before sending again (D18).
   */
  async stop(deadline: number): Promise<void> {
    if (await settlesBy(this.deps.clock, deadline, this.consumer?.cancel())) return;
    // A run still retrying the record of an accepted step (the store down) would otherwise keep
    // the process alive for ever; the lease lapses instead, and the next worker checks the
    // upstream before sending again, as after a crash.
    this.givenUp.abort(new Error('the worker stopped before this run ended'));
    for (const [jobId, token] of this.running) {
      await this.deps.records.leases.lapse(jobId, token).catch(() => undefined);
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
      // This run may have called the upstream: the next one treats it as uncertain.
      await records.leases.lapse(jobId, claimed.token).catch(() => {});
      throw err;
    } finally {
      this.running.delete(jobId);
    }
  }

  /** A message for a job we could not claim (LeasedRecords.unclaimed); an ended job may still owe its event. */
  private unclaimed(jobId: string, redelivered: boolean): Promise<void> {
    return this.deps.records.leases.unclaimed(jobId, redelivered, {
      finished: (job) => job.status === 'completed' || job.status === 'failed',
      ended: (job) => emitJobEnd(this.deps, job),
      requeue: (delayMs) => this.requeue(jobId, delayMs),
    });
  }

  async requeue(jobId: string, delayMs = 0, tenant?: string): Promise<void> {
    const message: JobMessage = tenant === undefined ? { jobId } : { jobId, tenant };
    await this.deps.queue.publish(JOBS_QUEUE, message, { priority: PRIORITY.client, delayMs: Math.max(0, delayMs) });
  }

  private async run({ record, token, takenOver }: Claimed<JobRecord>): Promise<void> {
    let job = record;
    const inputs = await this.deps.secrets.open(job);
    if (!inputs)
      return this.ended(
        job,
        await this.endWrite(job, token, job.steps, {
          message: 'the job inputs are gone (expired or purged; files go 24 hours after their upload)',
          code: 'INTERNAL_ERROR',
        }),
      );
    let lastRunCut = takenOver;
    for (const step of job.steps) {
      if (step.status === 'completed') continue;
      const moved = await this.runStep(job, token, step, inputs, lastRunCut);
      if (!moved) return;
      lastRunCut = false;
      if (job.steps.length > 1) await emitProgress(this.deps, moved, step.step);
      if (moved.status === 'completed') return this.ended(job, moved, inputs);
      job = moved;
    }
  }

  /**
   * Returns the job with the step completed (and, for its last step, the job completed), or
   * null when the job was rescheduled or failed. `lastRunCut`: the run before this one stopped
   * in the middle of this step, its attempt counted here.
   */
  private async runStep(
    job: JobRecord,
    token: string,
    step: JobStep,
    inputs: OpenedInputs,
    lastRunCut: boolean,
  ): Promise<JobRecord | null> {
    // `processing`: left so by a version that wrote it before each call.
    const lost = lastRunCut && step.status !== 'processing' ? 1 : 0;
    const uncertain = lastRunCut || step.status === 'processing' || step.uncertain === true;
    const attempts = step.attempts + lost + 1;
    let result: unknown;
    try {
      const call = stepCall(job.type, step, job.steps, inputs);
      const tenant = { hash: job.tenant, apiKey: inputs.apiKey };
      const found = uncertain ? await findExistingDossier(this.deps, job.opcoId, call, tenant) : null;
      result =
        found ??
        (await this.deps.pipeline.run(
          this.deps.opcos.context(job.opcoId, call.route, tenant, {
            body: call.body,
            files: call.files,
            priority: PRIORITY.client,
            requestId: job.requestId ?? job._id,
            traceparent: job.traceparent,
            deferrable: true,
          }),
        ));
    } catch (err) {
      if (err instanceof LeaseLost) throw err;
      await this.stepFailed(job, token, step.step, attempts, asServiceError(err), inputs);
      return null;
    }
    return this.recordStep(job, token, step.step, attempts, JSON.stringify(result ?? {}));
  }

  /** The upstream accepted the step: record its answer (ending the job after its last step), retrying the store, never failing the step for it. */
  private async recordStep(
    job: JobRecord,
    token: string,
    stepNumber: number,
    attempts: number,
    resultJson: string,
  ): Promise<JobRecord> {
    for (let attempt = 0; ; attempt++) {
      try {
        const steps = withStep(job.steps, stepNumber, { status: 'completed', attempts, resultJson, uncertain: false });
        if (steps.every((step) => step.status === 'completed')) return await this.endWrite(job, token, steps);
        return await this.deps.records.leases.update(job._id, token, { steps }, { renewMs: this.deps.leaseMs });
      } catch (err) {
        if (err instanceof LeaseLost) throw err;
        if (!isUnavailable(err) && attempt >= 2) {
          // Refused for what it is, not for an outage: keep a cut-down copy rather than lose the outcome.
          resultJson = JSON.stringify({ upstreamAnswer: truncatedText(resultJson) });
        }
        this.deps.log.warn(
          { jobId: job._id, requestId: job.requestId, step: stepNumber, err },
          'the upstream accepted the step but it could not be recorded yet; retrying',
        );
        await this.deps.clock.sleep(
          RECORD_RETRY_MS[Math.min(attempt, RECORD_RETRY_MS.length - 1)],
          this.givenUp.signal,
        );
      }
    }
  }

  private async stepFailed(
    job: JobRecord,
    token: string,
    stepNumber: number,
    attempts: number,
    error: ServiceError,
    inputs: OpenedInputs,
  ): Promise<void> {
    const move = nextMove(error, attempts, this.deps.retries);
    const uncertain = mayHaveReachedUpstream(error);
    if (move.kind === 'fail') {
      const steps = withStep(job.steps, stepNumber, { status: 'failed', attempts, uncertain });
      const failure: JobErrorRecord = {
        message: error.message,
        code: error.code,
        ...(error.upstream !== undefined && { upstreamJson: JSON.stringify(error.upstream) }),
      };
      // Attempts exhausted on an outage (not a refusal of the body) keep the inputs for an operator's retry (P23).
      const keep = isRetriedByWorkers(error);
      return this.ended(
        job,
        await this.endWrite(job, token, steps, job.steps.length > 1 ? { ...failure, step: stepNumber } : failure, keep),
        inputs,
      );
    }
    // A wait for budget is not an attempt; a retry is, and counts in `retries`.
    const step =
      move.kind === 'wait'
        ? { status: 'pending' as const, attempts: attempts - 1, uncertain }
        : { status: 'failed' as const, attempts, uncertain };
    // Scheduled and released in one write, then published: a message arriving before the lease
    // is dropped would find the job still held and be lost; if the publish fails, the overdue
    // sweep re-queues the job.
    const nextAttemptAt = new Date(this.deps.clock.now() + move.delayMs);
    const steps = withStep(job.steps, stepNumber, step);
    await this.deps.records.leases.release(job._id, token, {
      steps,
      nextAttemptAt,
      ...(move.kind === 'retry' && { retries: job.retries + 1 }),
    });
    this.deps.log.info(
      { jobId: job._id, requestId: job.requestId, step: stepNumber, code: error.code, move },
      'job step rescheduled',
    );
    await this.requeue(job._id, move.delayMs, job.tenant);
  }

  /**
   * The write that ends the job: its outcome, the lease gone, its event owed; the sealed inputs
   * gone too, but those of a job failed by an outage (`keepInputs`) while an operator may still
   * retry it (P23). A body the upstream refused would be refused again: its tenant fixes it.
   */
  private async endWrite(
    job: JobRecord,
    token: string,
    steps: JobStep[],
    error?: JobErrorRecord,
    keepInputs = false,
  ): Promise<JobRecord> {
    const now = this.deps.clock.date();
    const kept = error !== undefined && keepInputs && this.deps.retryWindowMs > 0;
    const end = error
      ? { status: 'failed' as const, error, completedAt: now }
      : { status: 'completed' as const, resultJson: jobResultJson(steps), completedAt: now };
    const ended = await this.deps.records.leases.release(
      job._id,
      token,
      {
        ...end,
        steps,
        notified: false,
        expiresAt: new Date(now.getTime() + this.deps.retentionMs),
        ...(kept && { retryableUntil: new Date(now.getTime() + this.deps.retryWindowMs) }),
      },
      { unset: kept ? [] : ['inputs'] },
    );
    if (!ended) throw new LeaseLost(job._id);
    return ended;
  }

  /** After the ending write: files purged, the end told. `before` still names the job's files. */
  private async ended(before: JobRecord, ended: JobRecord, inputs?: OpenedInputs): Promise<void> {
    if (ended.retryableUntil === undefined) await this.deps.secrets.purge(before, inputs);
    this.deps.log.info(
      { jobId: ended._id, requestId: ended.requestId, status: ended.status, worker: this.owner },
      'job ended',
    );
    this.deps.jobsEnded.inc({ opco: ended.opcoId, type: ended.type, status: ended.status });
    await emitJobEnd(this.deps, ended);
  }
}

function withStep(steps: JobStep[], stepNumber: number, changes: Partial<JobStep>): JobStep[] {
  return steps.map((step) => (step.step === stepNumber ? { ...step, ...changes } : step));
}
