/**
 * What a worker needs but must never be readable at rest (SPEC 5.4, D17): the tenant's API key,
 * the request body and the uploaded files, sealed with AES-256-GCM under the master key and bound
 * to its job id. The key and the body, sealed together, travel inside the job record (`inputs`),
 * written with it and removed by the write that ends it, so a job costs no round trip for them; files,
 * which can be megabytes each, are documents of their own, read only by jobs that have some.
 * A body over INLINE_BYTES is kept apart too (`job_secrets`, under the job's id), deflated then
 * sealed as bytes: every update of the record (its claim, a lease renewal, a step) rewrites it
 * whole, which the embedded store appends to its datafile: a 15.7 MB body inside it appended
 * 42 MB to `jobs.db` before the next rewrite (issue 38). What is kept apart is written once, never
 * updated, and deleted once, when the job ends (purge).
 * Nothing of it goes on the queue, and a sweeper removes files left older than 24 hours.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import {
  releaseBuffer,
  type Clock,
  type Collection,
  type Sealed,
  type SealedFile,
  type SealedPages,
  type Sealer,
  type Store,
} from '@opco-proxy/core';

const deflated = promisify(deflateRaw);
const inflated = promisify(inflateRaw);

/**
 * The JSON text of the key and the body above which they are kept apart from the job record.
 * Below, re-writing them with the record's few updates costs less than a store round trip more at
 * the submission, in the worker and at the end (a job's body is a few kilobytes).
 */
export const INLINE_BYTES = 64 * 1024;

/**
 * A file this large is sealed or opened in an event-loop turn of its own (AES-GCM takes about
 * 1 ms a megabyte): chained in one turn with the rest of its request and its job's start, a
 * 25 MiB upload's ciphers, copies and collection held the loop 80 ms (issue 38's bound: 100 ms).
 */
const OWN_TURN_BYTES = 1024 * 1024;

const bytesOf = (pages: readonly Buffer[]) => pages.reduce((sum, page) => sum + page.length, 0);

/** The job record's `inputs`. */
export type SealedInputs = InlineInputs | ApartInputs;

interface InlineInputs {
  /**
   * The API key and the body, sealed together as one JSON text: one cipher to make at the
   * submission and one to open in the worker (each costs a few microseconds, a job's 3 %).
   */
  secrets: Sealed;
  /** Roles of the job's files, stored apart in `job_files`. */
  files: string[];
}

/** Key and body over INLINE_BYTES: in `job_secrets` under the job's id (ApartRecord). */
interface ApartInputs {
  apart: true;
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

/** A large job's key and body (ApartInputs), in the same collection: their JSON text deflated, then sealed as bytes. */
interface ApartRecord {
  _id: string;
  deflated: SealedPages;
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
  /** `job_secrets`: large jobs' inputs (ApartRecord), and earlier versions' (LegacySecretRecord). */
  private readonly apart: Collection<LegacySecretRecord | ApartRecord>;
  private readonly files: Collection<FileRecord>;

  constructor(
    store: Store,
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {
    this.apart = store.collection<LegacySecretRecord | ApartRecord>('job_secrets');
    this.files = store.collection<FileRecord>('job_files');
  }

  async prepare(): Promise<void> {
    await this.files.createIndex({ jobId: 1 });
    await this.files.createIndex({ createdAt: 1 });
  }

  /**
   * Stores the files (and a large body) and returns the sealed inputs for the job record. The
   * files' pages are taken, encrypted where they lie and stored as they are (Sealer.sealPages), so
   * the caller must be done with them (hashed them for the Idempotency-Key) before.
   */
  async seal(jobId: string, inputs: JobInputs): Promise<SealedInputs> {
    const createdAt = this.clock.date();
    for (const [role, content] of Object.entries(inputs.files)) {
      if (bytesOf(content) > OWN_TURN_BYTES) await nextTurn();
      await this.files.insertOne({
        _id: `${jobId}:${role}`,
        jobId,
        role,
        content: this.sealer.sealPages(content, `${jobId}:${role}`),
        createdAt,
      });
    }
    const files = Object.keys(inputs.files);
    const text = JSON.stringify({ apiKey: inputs.apiKey, body: inputs.body ?? {} });
    if (text.length <= INLINE_BYTES) return { secrets: this.sealer.seal(text, jobId), files };
    // Deflated first: a body's JSON shrinks several times, and the datafile writes bytes as base64.
    const pages = [await deflated(text, { level: 1 })];
    await this.apart.insertOne({ _id: jobId, deflated: this.sealer.sealPages(pages, jobId), createdAt });
    return { apart: true, files };
  }

  /**
   * Null when the inputs are gone (the job already ended, or was swept), a file included: a job
   * pending past D17's 24 hours would otherwise go upstream without its files.
   */
  async open(job: { _id: string; inputs?: StoredInputs | null }): Promise<OpenedInputs | null> {
    const sealed = job.inputs && !('apart' in job.inputs) ? job.inputs : await this.apart.findOne({ _id: job._id });
    if (!sealed) return null;
    const files: Record<string, Buffer[]> = {};
    const stored: Buffer[] = [];
    // Legacy records say nothing of their files: look.
    if (!job.inputs || job.inputs.files.length > 0) {
      for (const file of await this.files.find({ jobId: job._id }, { sort: { _id: 1 } })) {
        if ('pages' in file.content && bytesOf(file.content.pages) > OWN_TURN_BYTES) await nextTurn();
        files[file.role] = this.sealer.unsealPieces(file.content, `${job._id}:${file.role}`);
        if ('pages' in file.content) stored.push(...file.content.pages);
      }
      if (job.inputs?.files.some((role) => !(role in files))) return null;
    }
    if ('secrets' in sealed || 'deflated' in sealed) {
      const text =
        'secrets' in sealed
          ? this.sealer.unseal(sealed.secrets, job._id)
          : await inflated(Buffer.concat(this.sealer.unsealPieces(sealed.deflated, job._id)));
      const { apiKey, body } = JSON.parse(text.toString('utf8')) as { apiKey: string; body: unknown };
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
   * Removes what is kept outside the job record (its `inputs` go with the write that ends it):
   * its files, and its key and body when they were too large for the record.
   * `opened`: what the ending worker opened; once the files are removed, the memory of their pages
   * is given back at once (the embedded store keeps the very pages the request decoded, resizable
   * buffers: resizable-buffer.ts), not at V8's next collection. Only the worker holding the job's
   * lease ends it, so no other reader of these pages is left.
   */
  async purge(job: { _id: string; inputs?: StoredInputs | null }, opened?: OpenedInputs): Promise<void> {
    if (!job.inputs || job.inputs.files.length > 0) await this.files.deleteMany({ jobId: job._id });
    if (!job.inputs || 'apart' in job.inputs) await this.apart.deleteOne({ _id: job._id });
    for (const page of opened?.stored ?? []) releaseBuffer(page);
  }

  /**
   * Whether a run of the job would find all it needs (an operator's retry, P23): its inputs, and
   * each of its files, which D17's sweep deletes 24 hours after their upload whatever the job's state.
   */
  async kept(job: { _id: string; inputs?: StoredInputs | null }): Promise<boolean> {
    if (!job.inputs) return false;
    if ('apart' in job.inputs && (await this.apart.count({ _id: job._id })) === 0) return false;
    return job.inputs.files.length === 0 || (await this.files.count({ jobId: job._id })) >= job.inputs.files.length;
  }

  /**
   * `kept` of a page of jobs (a bulk retry): two counts when every job is whole, which an outage's
   * jobs are, and the check per job only when some are not. A file's `_id` is its job's and role's,
   * so the totals matching means each job's count does.
   */
  async keptOf(jobs: Array<{ _id: string; inputs?: StoredInputs | null }>): Promise<Set<string>> {
    const withInputs = jobs.filter((job) => job.inputs);
    const apartIds = withInputs.filter((job) => job.inputs && 'apart' in job.inputs).map((job) => job._id);
    const withFiles = withInputs.filter((job) => job.inputs && job.inputs.files.length > 0);
    const filesOwed = withFiles.reduce((sum, job) => sum + (job.inputs?.files.length ?? 0), 0);
    const [apart, files] = await Promise.all([
      apartIds.length > 0 ? this.apart.count({ _id: { $in: apartIds } }) : 0,
      withFiles.length > 0 ? this.files.count({ jobId: { $in: withFiles.map((job) => job._id) } }) : 0,
    ]);
    if (apart === apartIds.length && files === filesOwed) return new Set(withInputs.map((job) => job._id));
    const kept = new Set<string>();
    for (const job of withInputs) if (await this.kept(job)) kept.add(job._id);
    return kept;
  }

  /** D17: files older than `maxAgeMs` go whatever their job's state. */
  async sweepFiles(maxAgeMs: number): Promise<number> {
    return this.files.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }

  /**
   * Inputs kept apart of jobs that no longer need them (left by a crash between a job's end and
   * its purge, or by earlier versions): `maxAgeMs` is the jobs' retention, far longer than a job
   * stays unfinished.
   */
  async sweepSecrets(maxAgeMs: number): Promise<number> {
    return this.apart.deleteMany({ createdAt: { $lte: new Date(this.clock.now() - maxAgeMs) } });
  }
}
