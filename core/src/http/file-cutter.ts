/**
 * The `_files` of a write body (SPEC 4.0.4, D7) cut out of its JSON text as the text arrives.
 * Each string value of the top-level `_files` object is decoded from base64 straight into bytes
 * (base64-file.ts) and a short placeholder takes its place in the text; everything else is kept
 * as it came, and JSON.parse reads the result. So a 10 MB file is never a 13 MB string, nor
 * text and parsed value and decoded bytes at once.
 *
 * This is not a JSON parser: it follows strings (quotes and escapes) and brackets only far
 * enough to know where such a value starts and ends, and JSON.parse still judges the whole
 * text. That is safe because a cut is always the content of a string, checked here to be valid
 * string content: swapping one string's content for another's changes no syntax, so the text
 * parses exactly when the body would have, with the same structure.
 */
import { releaseBuffer } from './resizable-buffer.js';
import { Base64File, type Base64Outcome } from './base64-file.js';
import { FILES_KEY } from './body-bounds.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const LETTER_U = 0x75;

/** What JSON.parse reads where a file was cut: `\u0000file:` and its index among the cuts. */
export const PLACEHOLDER = '\u0000file:';
const PLACEHOLDER_TEXT = '\\u0000file:';

/** The characters of JSON's short escapes, by the byte after the backslash. */
const SHORT_ESCAPES = new Map([...'"\\/bfnrt'].map((c, i) => [c.charCodeAt(0), '"\\/\b\f\n\r\t'.charCodeAt(i)]));
/** A top-level key longer than this (as written) cannot be `_files`, even spelled with \u escapes. */
const MAX_KEY_BYTES = 64;

const OTHER = 0;
const TOP_KEY = 1;
const FILE = 2;

export interface CutFile {
  outcome: Base64Outcome;
  /** Decoded bytes, counted past the limit too. */
  size: number;
  /** The bytes, page by page (none when invalid or over the limit). */
  content: Buffer[];
}

export class FileCutter {
  readonly files: CutFile[] = [];
  /** A file's string broke JSON's string rules: the body is not JSON. */
  invalidJson = false;
  private readonly text = new TextPieces();
  private depth = 0;
  private topObject = false;
  /** The container at depth 2 is the object under the top-level key `_files`. */
  private filesObject = false;
  /** In an object at depth 1 or 2: the next string is a key. */
  private expectKey = false;
  private memberIsFiles = false;
  private inString = false;
  private kind = OTHER;
  /** 0: none; 1: after a backslash; 2-5: that many minus 2 hex digits of a \u escape read. */
  private escape = 0;
  private unicode = 0;
  private key: number[] = [];
  private file: Base64File | undefined;

  /** `fileBytes`: the most a file may hold (D7). */
  constructor(private readonly fileBytes: number) {}

  /**
   * Reads one chunk of the body. Returns whether the text kept holds a view of `chunk` (long runs
   * of it are kept as they came, not copied): when not, the caller may give its memory back.
   */
  push(chunk: Buffer): boolean {
    let viewed = false;
    let kept = this.inString && this.kind === FILE ? -1 : 0; // where the text to keep starts; -1 inside a file
    for (let i = 0; i < chunk.length; i++) {
      if (this.inString) {
        if (this.kind === FILE) {
          i = this.fileRun(chunk, i);
          if (i < chunk.length) {
            this.endFile();
            kept = i;
          }
        } else {
          this.stringByte(chunk[i]);
        }
        continue;
      }
      switch (chunk[i]) {
        case QUOTE:
          this.startString();
          if (this.kind === FILE) {
            viewed = this.text.add(chunk, kept, i + 1) || viewed;
            this.text.addText(`${PLACEHOLDER_TEXT}${this.files.length}`);
            kept = -1;
            this.file = new Base64File(this.fileBytes);
          }
          break;
        case OPEN_BRACE:
          if (++this.depth === 1) this.topObject = true;
          else if (this.depth === 2) this.filesObject = this.topObject && this.memberIsFiles;
          this.expectKey = true;
          break;
        case OPEN_BRACKET:
          if (++this.depth === 1) this.topObject = false;
          else if (this.depth === 2) this.filesObject = false;
          this.expectKey = false;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          this.depth -= 1;
          this.expectKey = false;
          break;
        case COLON:
          this.expectKey = false;
          break;
        case COMMA:
          this.expectKey = this.depth === 1 ? this.topObject : this.depth === 2 && this.filesObject;
          break;
      }
    }
    if (kept >= 0) viewed = this.text.add(chunk, kept, chunk.length) || viewed;
    return viewed;
  }

  /** The body's text with the files cut out. */
  end(): Buffer {
    return this.text.join();
  }

  /** Gives back the memory of every file, the one still arriving included (resizable-buffer.ts). */
  discard(): void {
    this.file?.drop();
    for (const file of this.files) for (const page of file.content) releaseBuffer(page);
  }

  private startString(): void {
    this.inString = true;
    if (this.depth === 1 && this.topObject && this.expectKey) {
      this.kind = TOP_KEY;
      this.key = [];
    } else {
      this.kind = this.depth === 2 && this.filesObject && !this.expectKey ? FILE : OTHER;
    }
  }

  /** A byte inside a string that is not a file's: only its end matters (and a top-level key's name). */
  private stringByte(byte: number): void {
    if (this.escape !== 0) this.escape = 0;
    else if (byte === BACKSLASH) this.escape = 1;
    else if (byte === QUOTE) {
      this.inString = false;
      if (this.kind === TOP_KEY) this.memberIsFiles = isFilesKey(this.key);
      return;
    }
    if (this.kind === TOP_KEY && this.key.length <= MAX_KEY_BYTES) this.key.push(byte);
  }

  /** Inside a file's string: decodes up to its closing quote; returns the quote's index, or the chunk's length. */
  private fileRun(chunk: Buffer, start: number): number {
    const file = this.file!;
    let i = start;
    while (i < chunk.length) {
      if (this.escape !== 0) {
        this.escapeByte(file, chunk[i++]);
        continue;
      }
      i = file.run(chunk, i, chunk.length);
      if (i === chunk.length) break;
      const byte = chunk[i];
      if (byte === QUOTE) return i;
      if (byte === BACKSLASH) this.escape = 1;
      else if (byte < 0x20)
        this.invalidJson = true; // a raw control character: not JSON
      else file.char(byte);
      i += 1;
    }
    return chunk.length;
  }

  /** One byte of an escape in a file's string: the character it stands for goes to the decoder. */
  private escapeByte(file: Base64File, byte: number): void {
    if (this.escape === 1) {
      if (byte === LETTER_U) {
        this.escape = 2;
        this.unicode = 0;
        return;
      }
      const char = SHORT_ESCAPES.get(byte);
      if (char === undefined) this.invalidJson = true;
      else file.char(char);
      this.escape = 0;
      return;
    }
    const digit = hexDigit(byte);
    if (digit < 0) {
      this.invalidJson = true;
      this.escape = 0;
      return;
    }
    this.unicode = this.unicode * 16 + digit;
    if (++this.escape === 6) {
      file.char(this.unicode);
      this.escape = 0;
    }
  }

  private endFile(): void {
    const file = this.file!;
    this.file = undefined;
    this.inString = false;
    const outcome = file.end();
    this.files.push({ outcome, size: file.size, content: file.content() });
  }
}

function hexDigit(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** Whether a top-level key, as written between its quotes, names `_files` (escapes and all). */
function isFilesKey(raw: number[]): boolean {
  if (raw.length > MAX_KEY_BYTES) return false;
  // Without an escape the key is its bytes: every top-level key of every body comes here.
  if (!raw.includes(BACKSLASH)) return raw.length === FILES_KEY.length && raw.every((byte, i) => byte === FILES_KEY[i]);
  try {
    return JSON.parse(`"${Buffer.from(raw).toString('utf8')}"`) === '_files';
  } catch {
    return false; // not a JSON string: JSON.parse refuses the whole body anyway
  }
}

/** Every cutter's block until its first copy (never written: `reserve` replaces it). */
const NO_BLOCK = Buffer.alloc(0);

/**
 * The kept text, as the chunks it came in (no copy) with the short runs between cuts copied
 * together into blocks, so that a body of many small files is not one piece per file.
 */
class TextPieces {
  private readonly pieces: Buffer[] = [];
  private block = NO_BLOCK;
  private blockStart = 0;
  private used = 0;

  /** Keeps `chunk[start, end)`; returns whether as a view of `chunk` (true) or copied. */
  add(chunk: Buffer, start: number, end: number): boolean {
    if (end <= start) return false;
    if (end - start >= 1024) {
      this.flush();
      this.pieces.push(start === 0 && end === chunk.length ? chunk : chunk.subarray(start, end));
      return true;
    }
    this.reserve(end - start);
    this.used += chunk.copy(this.block, this.used, start, end);
    return false;
  }

  addText(text: string): void {
    this.reserve(text.length);
    this.used += this.block.write(text, this.used, 'latin1');
  }

  join(): Buffer {
    this.flush();
    return this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces);
  }

  private reserve(bytes: number): void {
    if (this.used + bytes <= this.block.length) return;
    this.flush();
    this.block = Buffer.allocUnsafe(Math.max(8192, bytes));
    this.blockStart = 0;
    this.used = 0;
  }

  /** Moves the block's bytes not yet in a piece into one. */
  private flush(): void {
    if (this.used > this.blockStart) this.pieces.push(this.block.subarray(this.blockStart, this.used));
    this.blockStart = this.used;
  }
}
