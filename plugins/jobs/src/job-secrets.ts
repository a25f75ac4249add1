/**
 * What a worker needs but the job record must not hold (SPEC 5.4, D17): the tenant's API key,
 * the request body and the uploaded files, each sealed with AES-256-GCM under the master key
 * and bound to its job id. Nothing of it goes on the queue; all of it is deleted when the job
 * ends, and a sweeper removes files left older than 24 hours.
 */
import type { Clock, Collection, Sealed, Sealer, Store } from '@opco-proxy/core';

interface SecretRecord {
  _id: string;
  apiKey: Sealed;
  body: Sealed;
  createdAt: Date;
}

interface FileRecord {
  _id: string;
  jobId: string;
  role: string;
  content: Sealed;
  createdAt: Date;
}

export interface JobInputs {
  apiKey: string;
  body: unknown;
  files: Record<string, Buffer>;
}

export class JobSecrets {
  private readonly secrets: Collection<SecretRecord>;
  private readonly files: Collection<FileRecord>;

  constructor(
    store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {
    this.secrets = store.collection<SecretRecord>('job_secrets');
    this.files = store.collection<FileRecord>('job_files');
  }

  async prepare(): Promise<void> {
    await this.files.createIndex({ jobId: 1 });
    await this.files.createIndex({ createdAt: 1 });
  }

  async put(jobId: string, inputs: JobInputs): Promise<void> {
    const createdAt = this.clock.date();
    await this.secrets.insertOne({
      _id: jobId,
      apiKey: this.sealer.seal(inputs.apiKey, jobId),
      body: this.sealer.seal(JSON.stringify(inputs.body ?? {}), jobId),
      createdAt,
    });
    for (const [role, content] of Object.entries(inputs.files)) {
      await this.files.insertOne({ _id: `${jobId}:${role}`, jobId, role, content: this.sealer.seal(content, `${jobId}:${role}`), createdAt });
    }
  }

  /** Null when the inputs are gone (the job already ended, or was swept). */
  async get(jobId: string): Promise<JobInputs | null> {
    const secret = await this.secrets.findOne({ _id: jobId });
    if (!secret) return null;
    const files: Record<string, Buffer> = {};
    for (const file of await this.files.find({ jobId }, { sort: { _id: 1 } })) {
      files[file.role] = this.sealer.unseal(file.content, `${jobId}:${file.role}`);
    }
    return {
      apiKey: this.sealer.unseal(secret.apiKey, jobId).toString('utf8'),
      body: JSON.parse(this.sealer.unseal(secret.body, jobId).toString('utf8')),
      files,
    };
  }

  async purge(jobId: string): Promise<void> {
    await this.files.deleteMany({ jobId });
    await this.secrets.deleteOne({ _id: jobId });
  }

  /** D17: files older than `maxAgeMs` go whatever their job's state. */
  async sweepFiles(maxAgeMs: number): Promise<number> {
    return this.files.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }

  /** Secrets of jobs that no longer exist (for instance expired records). */
  async sweepSecrets(maxAgeMs: number): Promise<number> {
    return this.secrets.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }
}
