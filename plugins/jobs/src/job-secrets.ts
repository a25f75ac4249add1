/**
 * What a worker needs but must never be readable at rest (SPEC 5.4, D17): the tenant's API key,
 * the request body and the uploaded files, sealed with AES-256-GCM under the master key and bound
 * to its job id. The key and the body, sealed together, travel inside the job record (`inputs`),
 * written with it and removed by the write that ends it, so a job costs no round trip for them; files,
 * which can be megabytes each, are documents of their own, read only by jobs that have some.
 * Nothing of it goes on the queue, and a sweeper removes files left older than 24 hours.
 */
import { releaseBuffer, type Clock, type Collection, type Sealed, type SealedFile, type Sealer, type Store } from '@opco-proxy/core';

/** The job record's `inputs`. */
export interface SealedInputs {
  /**
   * The API key and the body, sealed together as one JSON text: one cipher to make at the
   * submission and one to open in the worker (each costs a few microseconds, a job's 3 %).
   */
  secrets: Sealed;
  /** Roles of the job's files, stored apart in `job_files`. */
  files: string[];
}

/** `inputs` as versions before the joined seal wrote them; read for jobs queued then. */
interface SplitSealedInputs {
  apiKey: Sealed;
  body: Sealed;
  files: string[];
}

/** What a job record's `inputs` may hold: this version's, or an earlier one's. */
export type StoredInputs = SealedInputs | SplitSealedInputs;

/** Where inputs were kept before they moved into the job record; read for jobs queued then. */
interface LegacySecretRecord {
  _id: string;
  apiKey: Sealed;
  body: Sealed;
  createdAt: Date;
}

interface FileRecord {
  _id: string;
  jobId: string;
  role: string;
  /** Pages of ciphertext bytes (sealPages); base64 text for files stored by earlier versions. */
  content: SealedFile;
  createdAt: Date;
}

/** What a submission seals: the files as the request decoded them, page by page. */
export interface JobInputs {
  apiKey: string;
  body: unknown;
  files: Record<string, Buffer[]>;
}

/** What a worker opens: each file as the pieces it was decrypted in (FileContent). */
export interface OpenedInputs {
  apiKey: string;
  body: unknown;
  files: Record<string, Buffer[]>;
  /** The files' ciphertext pages as read, for purge() to give back (the embedded store's own). */
  stored: Buffer[];
}

export class JobSecrets {
  private readonly legacy: Collection<LegacySecretRecord>;
  private readonly files: Collection<FileRecord>;

  constructor(
    store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {
    this.legacy = store.collection<LegacySecretRecord>('job_secrets');
    this.files = store.collection<FileRecord>('job_files');
  }

  async prepare(): Promise<void> {
    await this.files.createIndex({ jobId: 1 });
    await this.files.createIndex({ createdAt: 1 });
  }

  /**
   * Stores the files and returns the sealed inputs for the job record. The files' pages are
   * taken, encrypted where they lie and stored as they are (Sealer.sealPages), so the caller must
   * be done with them (hashed them for the Idempotency-Key) before.
   */
  async seal(jobId: string, inputs: JobInputs): Promise<SealedInputs> {
    const createdAt = this.clock.date();
    for (const [role, content] of Object.entries(inputs.files)) {
      await this.files.insertOne({ _id: `${jobId}:${role}`, jobId, role, content: this.sealer.sealPages(content, `${jobId}:${role}`), createdAt });
    }
    return {
      secrets: this.sealer.seal(JSON.stringify({ apiKey: inputs.apiKey, body: inputs.body ?? {} }), jobId),
      files: Object.keys(inputs.files),
    };
  }

  /** Null when the inputs are gone (the job already ended, or was swept). */
  async open(job: { _id: string; inputs?: StoredInputs | null }): Promise<OpenedInputs | null> {
    const sealed = job.inputs ?? (await this.legacy.findOne({ _id: job._id }));
    if (!sealed) return null;
    const files: Record<string, Buffer[]> = {};
    const stored: Buffer[] = [];
    // Legacy records say nothing of their files: look.
    if (!('files' in sealed) || sealed.files.length > 0) {
      for (const file of await this.files.find({ jobId: job._id }, { sort: { _id: 1 } })) {
        files[file.role] = this.sealer.unsealPieces(file.content, `${job._id}:${file.role}`);
        if ('pages' in file.content) stored.push(...file.content.pages);
      }
    }
    if ('secrets' in sealed) {
      const { apiKey, body } = JSON.parse(this.sealer.unseal(sealed.secrets, job._id).toString('utf8')) as { apiKey: string; body: unknown };
      return { apiKey, body, files, stored };
    }
    return {
      apiKey: this.sealer.unseal(sealed.apiKey, job._id).toString('utf8'),
      body: JSON.parse(this.sealer.unseal(sealed.body, job._id).toString('utf8')),
      files,
      stored,
    };
  }

  /**
   * Removes what is kept outside the job record (its `inputs` go with the write that ends it).
   * `opened`: what the ending worker opened; once the files are removed, the memory of their pages
   * is given back at once (the embedded store keeps the very pages the request decoded, resizable
   * buffers: resizable-buffer.ts), not at V8's next collection. Only the worker holding the job's
   * lease ends it, so no other reader of these pages is left.
   */
  async purge(job: { _id: string; inputs?: StoredInputs | null }, opened?: OpenedInputs): Promise<void> {
    if (!job.inputs || job.inputs.files.length > 0) await this.files.deleteMany({ jobId: job._id });
    if (!job.inputs) await this.legacy.deleteOne({ _id: job._id });
    for (const page of opened?.stored ?? []) releaseBuffer(page);
  }

  /** D17: files older than `maxAgeMs` go whatever their job's state. */
  async sweepFiles(maxAgeMs: number): Promise<number> {
    return this.files.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }

  /** Inputs kept apart by earlier versions, of jobs that no longer need them. */
  async sweepSecrets(maxAgeMs: number): Promise<number> {
    return this.legacy.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }
}
