/**
 * One `_files` value (D7) decoded from base64 as its JSON text arrives, into pages of bytes:
 * neither the text nor a second copy of the bytes is ever held. The
 * rules are the schema's `byte` format (schemas' isBase64): standard alphabet, at most two `=`
 * at the end, a padded value a whole number of 4-character groups, an unpadded one not 1 past
 * one; no whitespace (a line break is refused, as before). Bytes past the limit are counted,
 * not kept, so an oversized file costs at most the limit and still gets its size in the 413.
 */

import { releaseBuffer, resizableBuffer, resizeBuffer } from './resizable-buffer.js';

const INVALID = 255;
const PAD = 64;
/** Each byte's 6-bit value, PAD for `=`, INVALID for everything else (quotes, escapes, controls). */
const VALUES = new Uint8Array(256).fill(INVALID);
[...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].forEach(
  (char, value) => (VALUES[char.charCodeAt(0)] = value),
);
VALUES['='.charCodeAt(0)] = PAD;

/**
 * A file is kept as pages of PAGE bytes: the first grows from 192 bytes by doubling (a body may
 * hold thousands of tiny files), then each next page is a resizable buffer (resizable-buffer.ts)
 * of PAGE bytes, so a large file is never copied and each page's memory can be given back the
 * moment it is sealed. Every page but the last holds a multiple of 3 bytes: their base64 texts
 * join into the file's.
 */
const PAGE = 768 * 1024;
const FIRST_PAGE = 192;
/** Past this the first page is not doubled but followed by resizable pages. */
const GROWN_PAGE = 96 * 1024;
const EMPTY: Buffer = Buffer.alloc(0);

export type Base64Outcome = 'valid' | 'empty' | 'invalid';

export class Base64File {
  /** Decoded bytes, counted on past the limit. */
  size = 0;
  private readonly full: Buffer[] = [];
  private page: Buffer = EMPTY;
  private used = 0;
  private quad = 0;
  private inQuad = 0;
  private chars = 0;
  private padding = 0;
  private invalid = false;

  /** `limit`: the most bytes kept; past it they are counted only. */
  constructor(private readonly limit: number) {}

  /**
   * Decodes `chunk[start, end)` up to the first byte that is not a base64 digit (a quote, an
   * escape, `=`, anything else) and returns its index; the caller hands such a byte to `char`.
   * Whole 4-digit groups are decoded by Node's decoder straight into the page: byte by byte,
   * writes into a resizable page cost 20 times a plain one's on Node 20 (34 ms per 768 KiB),
   * and a 25 MiB upload held the event loop 130 ms per chunk.
   */
  run(chunk: Buffer, start: number, end: number): number {
    if (this.invalid || this.padding > 0) return start;
    let i = start;
    // A group begun in an earlier chunk is finished digit by digit.
    for (; i < end && this.inQuad !== 0; i++) {
      const value = VALUES[chunk[i]];
      if (value >= PAD) break;
      this.digit(value);
    }
    if (this.inQuad !== 0) {
      this.chars += i - start;
      return i;
    }
    let digits = i;
    while (digits < end && VALUES[chunk[digits]] < PAD) digits++;
    const groupsEnd = i + ((digits - i) & ~3);
    if (groupsEnd > i) this.groups(chunk, i, groupsEnd);
    for (let k = groupsEnd; k < digits; k++) this.digit(VALUES[chunk[k]]);
    this.chars += digits - start;
    return digits;
  }

  private digit(value: number): void {
    this.quad = (this.quad << 6) | value;
    if (++this.inQuad === 4) {
      this.emit(this.quad, 3);
      this.quad = 0;
      this.inQuad = 0;
    }
  }

  /** Whole groups of digits, `chunk[from, to)` (a multiple of 4 long): their bytes into the pages. */
  private groups(chunk: Buffer, from: number, to: number): void {
    const bytes = ((to - from) / 4) * 3;
    if (this.size + bytes > this.limit) {
      this.size += bytes;
      if (this.page !== EMPTY || this.full.length > 0) this.drop();
      return;
    }
    while (from < to) {
      const room = Math.floor((this.page.length - this.used) / 3);
      if (room === 0) {
        // Pages hold whole groups' bytes; a page not ending on one (never, as sized) takes a group byte by byte.
        if (this.used === this.page.length) this.nextPage();
        else {
          for (let k = from; k < from + 4; k++) this.digit(VALUES[chunk[k]]);
          from += 4;
        }
        continue;
      }
      const take = Math.min(room, (to - from) / 4);
      this.used += this.page.write(chunk.toString('latin1', from, from + take * 4), this.used, 'base64');
      this.size += take * 3;
      from += take * 4;
    }
  }

  /** One character of the value (an unescaped one, or one that `run` stopped at). */
  char(code: number): void {
    if (this.invalid) return;
    const value = code < 256 ? VALUES[code] : INVALID;
    if (value === INVALID || (this.padding > 0 && value !== PAD)) return this.refuse();
    this.chars += 1;
    if (value === PAD) {
      if (++this.padding > 2) this.refuse();
      return;
    }
    this.digit(value);
  }

  /** The value ended: its last bytes, and whether it was base64 at all. */
  end(): Base64Outcome {
    if (!this.invalid) {
      const fits = this.padding > 0 ? this.chars % 4 === 0 : this.chars % 4 !== 1;
      if (!fits) this.refuse();
      // What Node's decoder gives for the last group: 2 digits make a byte, 3 make two.
      else if (this.inQuad === 2) this.emit(this.quad >> 4, 1);
      else if (this.inQuad === 3) this.emit(this.quad >> 2, 2);
    }
    if (this.invalid) return 'invalid';
    if (this.size > this.limit) this.drop();
    // The last page cut to its bytes: in place when resizable, else (a small one) copied.
    else if (this.page.length > this.used)
      this.page =
        this.page.length === PAGE ? resizeBuffer(this.page, this.used) : Buffer.from(this.page.subarray(0, this.used));
    return this.chars === 0 ? 'empty' : 'valid';
  }

  /** The decoded bytes, page by page (none when invalid or over the limit). */
  content(): Buffer[] {
    return this.page.length > 0 ? [...this.full, this.page] : [...this.full];
  }

  private refuse(): void {
    this.invalid = true;
    this.drop();
  }

  /** Gives the pages' memory back now (the body was refused, or the file was never ended). */
  drop(): void {
    for (const page of [...this.full, this.page]) releaseBuffer(page);
    this.full.length = 0;
    this.page = EMPTY;
    this.used = 0;
  }

  /** Writes the low `count` bytes of `bits` (big-endian), unless the file is past the limit. */
  private emit(bits: number, count: 1 | 2 | 3): void {
    this.size += count;
    if (this.size > this.limit) {
      if (this.page !== EMPTY || this.full.length > 0) this.drop();
      return;
    }
    if (this.used + count <= this.page.length) {
      const page = this.page;
      const at = this.used;
      if (count === 3) {
        page[at] = bits >> 16;
        page[at + 1] = (bits >> 8) & 0xff;
        page[at + 2] = bits & 0xff;
      } else if (count === 2) {
        page[at] = (bits >> 8) & 0xff;
        page[at + 1] = bits & 0xff;
      } else {
        page[at] = bits & 0xff;
      }
      this.used += count;
      return;
    }
    for (let shift = (count - 1) * 8; shift >= 0; shift -= 8) this.byte((bits >> shift) & 0xff);
  }

  /** One byte where the page may be full: the next page first. */
  private byte(value: number): void {
    if (this.used === this.page.length) this.nextPage();
    this.page[this.used++] = value;
  }

  private nextPage(): void {
    const current = this.page.length;
    if (current === PAGE) {
      this.full.push(this.page);
      this.page = resizableBuffer(PAGE, PAGE);
      this.used = 0;
      return;
    }
    // The first page: doubled while small (a copy of under GROWN_PAGE bytes), then made a
    // resizable page of its own.
    const next =
      current === 0
        ? Buffer.allocUnsafeSlow(FIRST_PAGE)
        : current < GROWN_PAGE
          ? Buffer.allocUnsafeSlow(current * 2)
          : resizableBuffer(PAGE, PAGE);
    this.page.copy(next, 0, 0, current);
    this.page = next;
  }
}
