/**
 * The bounds of a request body (issue 38), counted while the body streams in, chunk by chunk, and
 * refused at the first byte past one: its depth (MAX_BODY_DEPTH), its number of values, the
 * fields of any one object and the items of any one array (json-limits.ts `BodyBounds`), and, for
 * an operation that takes `_files`, the name of each file: a role of the files schema (cerfa,
 * facture, convention, certificat, document), refused as soon as its key ends, before the cutter
 * (file-cutter.ts) decodes a byte of its base64. Each of those is 400 VALIDATION_ERROR naming
 * where (`lignes: Must contain at most 10000 items`, `_files.foo: Unknown file role, ...`), as
 * the schema would say it. And the bytes of JSON beside the files' contents, what JSON.parse
 * will read, are bounded too (`jsonBytes`): past it, 413 PAYLOAD_TOO_LARGE, as for the body's
 * own limit. The rest of the body is left unread.
 *
 * So JSON.parse only ever reads a body within the bounds, its cost bounded by `jsonBytes`;
 * nothing walks the parsed value again to measure it; and a body of a million keys costs the
 * reading of its first thousand.
 *
 * Like the cutter, this is not a JSON parser: it follows strings (a string ends at a quote after
 * an even run of backslashes, found with indexOf, so a long string costs a native scan) and the
 * punctuation outside them. On valid JSON its counts are exact; invalid JSON may be counted
 * wrong, but JSON.parse refuses it anyway.
 */
import { loadSchema, schemaIds } from '@opco-proxy/schemas';
import { createError, type ServiceError } from '../errors/errors.js';
import { MAX_BODY_DEPTH, type BodyBounds } from '../limits/json-limits.js';

/** The file roles `_files` takes (SPEC 4.0.4): the properties of the files schema. */
export const FILE_ROLES: readonly string[] = Object.freeze(Object.keys(loadSchema(schemaIds.files).properties ?? {}));

/** What a `_files` name that is not a role gets; the files schema says the same (`errorMessage`). */
export const UNKNOWN_ROLE = `Unknown file role, expected one of ${FILE_ROLES.join(', ')}`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

const OBJECT = 1;
const ARRAY = 2;

/** What the next token is, outside a string. */
const EXPECT_NONE = 0;
const EXPECT_VALUE = 1;
const EXPECT_KEY = 2;

/** The bytes of a key kept to name it; a longer one is named by its start. */
const KEY_BYTES = 64;
/** `_files` as written without escapes (the cutter, file-cutter.ts, looks for it too). */
export const FILES_KEY = Buffer.from('_files');

export class BodyBoundsScanner {
  private depth = 0;
  // A scanner is made per request: its counts are plain arrays, as a Uint32Array's own memory
  // costs a microsecond to set up (a scanner cost 3.5 µs with two of them, a Uint8Array's 34 bytes
  // live on V8's heap).
  /** By depth (1: the body), the kind of the open container and its entries so far. */
  private readonly kinds = new Uint8Array(MAX_BODY_DEPTH + 2);
  private readonly counts: number[] = new Array<number>(MAX_BODY_DEPTH + 2).fill(0);
  /** By depth, the key of the member being read: its first KEY_BYTES bytes as written, at depth * KEY_BYTES, and its length. */
  private readonly keys = Buffer.allocUnsafe((MAX_BODY_DEPTH + 2) * KEY_BYTES);
  private readonly keyLengths: number[] = new Array<number>(MAX_BODY_DEPTH + 2).fill(0);
  private values = 0;
  /** Bytes read so far outside the strings of files. */
  private jsonBytes = 0;
  private expect = EXPECT_VALUE;
  private inString = false;
  private stringIsKey = false;
  /** The string being read is a file's (a value of the body's `_files`): the cutter's, not JSON.parse's. */
  private stringIsFile = false;
  /** The last chunk ended on an odd run of backslashes inside a string: the next byte is escaped. */
  private escaped = false;
  /** The body's member being read is `_files`; the object at depth 2 is then the files'. */
  private memberIsFiles = false;
  private inFiles = false;

  /** `roles`: the names `_files` takes, for an operation that takes files; absent, no check. */
  constructor(
    private readonly bounds: BodyBounds,
    private readonly roles?: ReadonlySet<string>,
  ) {}

  /**
   * Counts one chunk; throws 400 VALIDATION_ERROR at the first byte past a bound of structure,
   * 413 PAYLOAD_TOO_LARGE at the first chunk past `jsonBytes`.
   */
  push(chunk: Buffer): void {
    this.jsonBytes += chunk.length;
    this.scan(chunk);
    if (this.jsonBytes > this.bounds.jsonBytes) {
      throw createError(
        'PAYLOAD_TOO_LARGE',
        `request body is over the ${this.bounds.jsonBytes}-byte limit for its JSON outside _files`,
      );
    }
  }

  private scan(chunk: Buffer): void {
    const length = chunk.length;
    let i = 0;
    while (i < length) {
      if (this.inString) {
        const end = this.stringEnd(chunk, i);
        if (this.stringIsKey) this.keep(chunk, i, end < 0 ? length : end);
        else if (this.stringIsFile) this.jsonBytes -= (end < 0 ? length : end) - i;
        if (end < 0) return;
        this.inString = false;
        if (this.stringIsKey) this.keyRead();
        i = end + 1;
        continue;
      }
      const byte = chunk[i++];
      switch (byte) {
        case QUOTE:
          this.stringIsKey = this.expect === EXPECT_KEY;
          this.stringIsFile = this.inFiles && !this.stringIsKey && this.depth === 2;
          if (this.stringIsKey) this.key();
          else if (this.expect === EXPECT_VALUE) this.value();
          this.expect = EXPECT_NONE;
          this.inString = true;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          if (this.expect === EXPECT_VALUE) this.value();
          this.open(byte === OPEN_BRACE ? OBJECT : ARRAY);
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          if (this.depth === 2) this.inFiles = false;
          if (this.depth > 0) this.depth -= 1;
          this.expect = EXPECT_NONE;
          break;
        case COMMA:
          this.expect = this.kinds[this.depth] === OBJECT ? EXPECT_KEY : EXPECT_VALUE;
          break;
        case COLON:
          this.expect = EXPECT_VALUE;
          break;
        case SPACE:
        case TAB:
        case LF:
        case CR:
          break;
        default: // the first byte of a number, true, false or null
          if (this.expect === EXPECT_VALUE) {
            this.value();
            this.expect = EXPECT_NONE;
          }
      }
    }
  }

  /** The index of the quote that ends the string `chunk[from...]` is in, or -1 when it goes on. */
  private stringEnd(chunk: Buffer, from: number): number {
    let i = from;
    if (this.escaped) {
      if (i >= chunk.length) return -1;
      this.escaped = false;
      i += 1;
    }
    for (;;) {
      const quote = chunk.indexOf(QUOTE, i);
      const end = quote < 0 ? chunk.length : quote;
      let run = 0;
      for (let j = end - 1; j >= i && chunk[j] === BACKSLASH; j--) run += 1;
      if (quote < 0) {
        this.escaped = run % 2 === 1;
        return -1;
      }
      if (run % 2 === 0) return quote;
      i = quote + 1;
    }
  }

  /** A value starts: one more of the body's, and one more item of the array it is in. */
  private value(): void {
    if (++this.values > this.bounds.bodyValues)
      this.refuse('body', `Must contain at most ${this.bounds.bodyValues} values`);
    if (this.kinds[this.depth] === ARRAY && ++this.counts[this.depth] > this.bounds.arrayItems) {
      this.refuse(this.path(this.depth), `Must contain at most ${this.bounds.arrayItems} items`);
    }
  }

  /** A key starts: one more field of the object it is in. */
  private key(): void {
    if (++this.counts[this.depth] > this.bounds.objectKeys)
      this.refuse(this.path(this.depth), `Must contain at most ${this.bounds.objectKeys} fields`);
    this.keyLengths[this.depth] = 0;
  }

  private open(kind: number): void {
    if (this.depth === MAX_BODY_DEPTH) {
      const message = `body: nested deeper than ${MAX_BODY_DEPTH} levels`;
      throw createError('VALIDATION_ERROR', message, { errors: [message] });
    }
    this.depth += 1;
    this.kinds[this.depth] = kind;
    this.counts[this.depth] = 0;
    this.expect = kind === OBJECT ? EXPECT_KEY : EXPECT_VALUE;
    if (this.depth === 2) this.inFiles = kind === OBJECT && this.memberIsFiles;
  }

  /** Keeps the start of the key being read, as written. */
  private keep(chunk: Buffer, start: number, end: number): void {
    const kept = this.keyLengths[this.depth];
    if (kept < KEY_BYTES && end > start)
      chunk.copy(this.keys, this.depth * KEY_BYTES + kept, start, Math.min(end, start + KEY_BYTES - kept));
    this.keyLengths[this.depth] = kept + (end - start);
  }

  private keyRead(): void {
    if (this.roles === undefined) return;
    if (this.depth === 1) {
      this.memberIsFiles = this.kinds[1] === OBJECT && this.keyIs(FILES_KEY);
    } else if (this.depth === 2 && this.inFiles) {
      const role = this.keyName(2);
      if (!this.roles.has(role)) this.refuse(`_files.${role}`, UNKNOWN_ROLE);
    }
  }

  /** Whether the key just read at this depth is `name` (escapes and all). */
  private keyIs(name: Buffer): boolean {
    const raw = this.keyBytes(this.depth);
    if (!raw.includes(BACKSLASH)) return raw.length === this.keyLengths[this.depth] && raw.equals(name);
    return this.keyLengths[this.depth] <= KEY_BYTES && this.keyName(this.depth) === name.toString('latin1');
  }

  /** The key of the member read at `depth`, decoded; a long one cut short. */
  private keyName(depth: number): string {
    const length = this.keyLengths[depth];
    const raw = this.keyBytes(depth);
    let name: string;
    try {
      name = raw.includes(BACKSLASH) ? (JSON.parse(`"${raw.toString('utf8')}"`) as string) : raw.toString('utf8');
    } catch {
      name = raw.toString('utf8'); // cut inside an escape, or not JSON: the parse refuses it anyway
    }
    return length > KEY_BYTES ? `${name}…` : name;
  }

  /** The kept bytes of the key at `depth`. */
  private keyBytes(depth: number): Buffer {
    const start = depth * KEY_BYTES;
    return this.keys.subarray(start, start + Math.min(this.keyLengths[depth], KEY_BYTES));
  }

  /** Where the container at `depth` is, as validation names it: `lignes`, `cerfa.formation`, `objets.3`. */
  private path(depth: number): string {
    if (depth <= 1) return 'body';
    const segments: string[] = [];
    for (let d = 1; d < depth; d++)
      segments.push(this.kinds[d] === OBJECT ? this.keyName(d) : String(this.counts[d] - 1));
    return segments.join('.');
  }

  private refuse(path: string, message: string): never {
    throw bodyRefusal(`${path}: ${message}`);
  }
}

function bodyRefusal(message: string): ServiceError {
  return createError('VALIDATION_ERROR', message, { errors: [message] });
}
