/**
 * A collection's datafile: an append-only journal of JSON lines, rewritten compactly at load and
 * by compaction. The format is nedb's, so that the datafiles written while the embedded store
 * ran on nedb open unchanged: a document per line (a later line replaces an earlier one of the
 * same `_id`), `{"$$deleted":true,"_id":...}` for a deletion, `{"$$indexCreated":{"fieldName":
 * "a,b","unique":...}}` for an index; Dates as `{"$$date": ms}`, bytes as `{"$$bytes": base64}`.
 *
 * What survives a kill -9: every write acknowledged to a caller, appended before its promise
 * resolves (written to the file, not flushed to the disk, as nedb did). Appends are queued in the
 * order they are made and written together while the file is busy: one write of the file for
 * the changes of many concurrent requests instead of one each (a write of the file costs tens of
 * microseconds of CPU, most of a small change's cost). A rewrite takes its turn in the same
 * queue: appends made meanwhile go to the new file. A rewrite goes to
 * `<file>~`, flushed, then renamed over the file; a crash before the rename leaves the previous
 * file, and a file missing at load with its `~` present is the rewrite that was being renamed.
 * A last line cut short by a crash (unreadable, with no newline after it) is dropped whatever the file's size
 * (nedb counted it as corrupt, and refused a small file for it); other unreadable lines are
 * skipped up to a tenth of the file, and more refuse to open it rather than lose data.
 */
import { open, readFile, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { kernelError } from '../errors/kernel-errors.js';

export interface IndexSpec {
  /** Sorted, as nedb named a compound index by its sorted fields joined with commas. */
  fields: string[];
  unique: boolean;
}

export type StoredDoc = Record<string, unknown> & { _id: string };

const CORRUPT_ALERT_SHARE = 0.1;

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class Datafile {
  /** Kept open between appends (opening the file for each cost more than the write); closed by a rewrite. */
  private appending: FileHandle | undefined;
  /** Lines queued for the next write of the file, and who waits for them. */
  private pending = '';
  private waiters: Waiter[] = [];
  /** The file's operations, one at a time: a write of the queued lines, a rewrite. */
  private turns: Promise<void> = Promise.resolve();
  private writeQueued = false;

  private constructor(private readonly filename: string) {}

  /** Reads the datafile (created when missing), then rewrites it with only what it holds now. */
  static async open(filename: string): Promise<{ datafile: Datafile; docs: StoredDoc[]; indexes: IndexSpec[] }> {
    const text = await readRecovered(filename);
    const docs = new Map<string, StoredDoc>();
    const indexes = new Map<string, IndexSpec>();
    const lines = text.split('\n').filter((line) => line !== '');
    // A last line with no newline after it, unreadable, is an append a crash cut short.
    const cutShort = text.endsWith('\n') ? undefined : lines[lines.length - 1];
    let corrupt = 0;
    for (const line of lines) {
      let entry: Record<string, unknown>;
      try {
        entry = deserialize(line);
      } catch {
        if (line !== cutShort) corrupt++;
        continue;
      }
      if (entry === null || typeof entry !== 'object') {
        corrupt++;
        continue;
      }
      const created = entry.$$indexCreated as { fieldName?: unknown; unique?: unknown } | undefined;
      if (typeof entry._id === 'string' && entry._id !== '') {
        if (entry.$$deleted === true) docs.delete(entry._id);
        else docs.set(entry._id, entry as StoredDoc);
      } else if (created && typeof created.fieldName === 'string') {
        indexes.set(created.fieldName, { fields: created.fieldName.split(','), unique: created.unique === true });
      } else if (typeof entry.$$indexRemoved === 'string') indexes.delete(entry.$$indexRemoved);
      else corrupt++;
    }
    if (lines.length > 0 && corrupt / lines.length > CORRUPT_ALERT_SHARE) {
      throw kernelError('OPCO_ERR_STORE_DATAFILE_CORRUPT', { file: filename, corrupt, lines: lines.length });
    }
    const datafile = new Datafile(filename);
    await datafile.rewrite(docs.values(), [...indexes.values()]);
    return { datafile, docs: [...docs.values()], indexes: [...indexes.values()] };
  }

  /**
   * Appends documents as they are now, and deletions, after every earlier append: serialised
   * before it returns, so the caller may change them next; resolves once written to the file.
   */
  append(docs: readonly object[], deletedIds: readonly string[] = []): Promise<void> {
    let text = '';
    for (const doc of docs) text += serialize(doc) + '\n';
    for (const _id of deletedIds) text += serialize({ $$deleted: true, _id }) + '\n';
    return text === '' ? Promise.resolve() : this.queue(text);
  }

  appendIndex(index: IndexSpec): Promise<void> {
    return this.queue(indexLine(index) + '\n');
  }

  private queue(text: string): Promise<void> {
    this.pending += text;
    const written = new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
    if (!this.writeQueued) {
      this.writeQueued = true;
      this.turns = this.turns.then(() => this.writePending());
    }
    return written;
  }

  /** Writes every line queued so far in one write; what is queued meanwhile waits for the next. */
  private async writePending(): Promise<void> {
    const text = this.pending;
    const waiters = this.waiters;
    this.pending = '';
    this.waiters = [];
    this.writeQueued = false;
    try {
      this.appending ??= await open(this.filename, 'a');
      await this.appending.appendFile(text, 'utf8');
      for (const waiter of waiters) waiter.resolve();
    } catch (err) {
      for (const waiter of waiters) waiter.reject(err);
    }
  }

  /**
   * The datafile holding only `docs` and `indexes`, replaced whole or not at all, once the appends
   * queued before it are written. `docs` is read as the rewrite goes: a change made meanwhile is
   * in it or in an append queued after it, which goes to the new file.
   */
  rewrite(docs: Iterable<object>, indexes: readonly IndexSpec[]): Promise<void> {
    const done = this.turns.then(() => this.replace(docs, indexes));
    this.turns = done.catch(() => undefined);
    return done;
  }

  private async replace(docs: Iterable<object>, indexes: readonly IndexSpec[]): Promise<void> {
    const temporary = `${this.filename}~`;
    // The handle would go on appending to the file the rename replaces.
    const appending = this.appending;
    this.appending = undefined;
    await appending?.close();
    const file = await open(temporary, 'w');
    try {
      let chunk = indexes.map((index) => indexLine(index) + '\n').join('');
      for (const doc of docs) {
        chunk += serialize(doc) + '\n';
        if (chunk.length > 1 << 20) {
          await file.write(chunk);
          chunk = '';
        }
      }
      await file.write(chunk);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, this.filename);
    await syncDirectory(dirname(this.filename));
  }
}

/** The file's text, after finishing a rewrite a crash interrupted between its write and its rename. */
async function readRecovered(filename: string): Promise<string> {
  try {
    return await readFile(filename, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    await rename(`${filename}~`, filename);
    return await readFile(filename, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await writeFile(filename, '', { flag: 'a' });
  return '';
}

/** Makes a rename durable; some filesystems cannot flush a directory, which loses nothing else. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

function indexLine(index: IndexSpec): string {
  return JSON.stringify({ $$indexCreated: { fieldName: index.fields.join(','), unique: index.unique, sparse: false } });
}

export function serialize(doc: object): string {
  return JSON.stringify(doc, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $$date: raw.getTime() };
    if (raw instanceof Uint8Array)
      return { $$bytes: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
    return value;
  });
}

export function deserialize(line: string): Record<string, unknown> {
  return JSON.parse(line, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const tagged = value as { $$date?: unknown; $$bytes?: unknown };
    if (tagged.$$date !== undefined) return new Date(tagged.$$date as number);
    if (typeof tagged.$$bytes === 'string') return Buffer.from(tagged.$$bytes, 'base64');
    return value;
  }) as Record<string, unknown>;
}
