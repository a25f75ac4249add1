/**
 * The one crypto helper: hashing, HMAC signatures, AES-256-GCM sealing (SPEC 5.4) and random ids.
 * Everything else in the code base goes through these functions.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  randomFillSync,
  timingSafeEqual,
  type Cipher,
} from 'node:crypto';
import { releaseChunk } from '../http/resizable-buffer.js';

export function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hmacSha256Hex(secret: string | Buffer, data: string | Buffer): string {
  return createHmac('sha256', secret).update(data).digest('hex');
}

export function hmacSha256Base64(secret: string | Buffer, data: string | Buffer): string {
  return createHmac('sha256', secret).update(data).digest('base64');
}

/** Constant-time comparison of two hex strings (different lengths compare unequal). */
export function safeEqualHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Constant-time comparison of two secrets of any text (compared as SHA-256, so lengths leak nothing). */
export function safeEqualText(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

export function randomHex(bytes: number): string {
  return randomFromPool(bytes).toString('hex');
}

/**
 * Random bytes (a CSPRNG's, as randomBytes) drawn from a pool refilled 4 KiB at a time, as node
 * does for randomUUID: one randomBytes call costs about 5 µs on this kind of machine and a job
 * made five of them (ids, lease tokens, its IV), 3 % of a submission's CPU; a draw costs 0.1 µs.
 * Each byte is handed out once, copied, so nothing later refilled can change what a caller holds.
 */
function randomFromPool(bytes: number): Buffer {
  if (bytes > ENTROPY.length) return randomBytes(bytes);
  if (entropyAt + bytes > ENTROPY.length) {
    randomFillSync(ENTROPY);
    entropyAt = 0;
  }
  const drawn = Buffer.from(ENTROPY.subarray(entropyAt, entropyAt + bytes));
  entropyAt += bytes;
  return drawn;
}
const ENTROPY = Buffer.alloc(4096);
let entropyAt = ENTROPY.length;

/** A sealed value: per-record random 12-byte IV, GCM tag, ciphertext; all base64. */
export interface Sealed {
  iv: string;
  tag: string;
  data: string;
}

export function parseMasterKey(hex: string): Buffer {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('master key must be 64 hex characters (32 bytes)');
  return Buffer.from(hex, 'hex');
}

export function seal(key: Buffer, plaintext: Buffer | string, associatedData?: string): Sealed {
  const iv = randomFromPool(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (associatedData) cipher.setAAD(Buffer.from(associatedData));
  const data = joined(
    cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext) : plaintext),
    cipher.final(),
  );
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** Throws when the key is wrong or the record was tampered with (GCM authentication). */
export function unseal(key: Buffer, sealed: Sealed, associatedData?: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  if (associatedData) decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return joined(decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final());
}

/** GCM's final() gives no bytes: a value is then not copied a second time to join them. */
function joined(head: Buffer, tail: Buffer): Buffer {
  return tail.length === 0 ? head : Buffer.concat([head, tail]);
}

/**
 * A large value (a file) sealed as one AES-256-GCM stream, its ciphertext kept as consecutive
 * pages of bytes (stored as bytes: BSON binary data on MongoDB), so that no step holds it as one
 * buffer, and no step turns it into text.
 */
export interface SealedPages {
  iv: string;
  tag: string;
  pages: Buffer[];
}

/** A file as versions before SealedPages stored it: the base64 of consecutive parts. */
export interface SealedParts {
  iv: string;
  tag: string;
  parts: string[];
}

/** What a stored file may hold: this version's pages, or an earlier version's text. */
export type SealedFile = SealedPages | SealedParts | Sealed;

/**
 * Seals a file given as pages (FileContent) and takes them: each is encrypted where it lies (a
 * slice at a time; GCM's ciphertext is as long as its plaintext) and becomes a page of the
 * result. So sealing a file costs no copy of its bytes and no text: the very pages the request
 * decoded are stored. They are taken out of `pages`, which is left empty, because the request's
 * clean-up gives back the memory of the files still in it (FileCutter.discard), and would
 * otherwise empty the stored ciphertext.
 */
export function sealPages(key: Buffer, pages: Buffer[], associatedData?: string): SealedPages {
  const taken = pages.splice(0);
  const iv = randomFromPool(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (associatedData) cipher.setAAD(Buffer.from(associatedData));
  for (const page of taken) inPlace(cipher, page);
  cipher.final();
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), pages: taken };
}

/**
 * unseal() for a file (sealed by sealPages, or as text by earlier versions): the plaintext as the
 * pieces the cipher gives, never copied into one buffer; text is decoded a slice at a time into
 * one small buffer. So opening a file costs its size once. Returned only once the tag is verified.
 */
export function unsealPieces(key: Buffer, sealed: SealedFile, associatedData?: string): Buffer[] {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  if (associatedData) decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  const pieces: Buffer[] = [];
  if ('pages' in sealed) {
    for (const page of sealed.pages) pieces.push(decipher.update(page));
  } else {
    const slice = Buffer.allocUnsafe(CIPHER_SLICE);
    for (const text of 'parts' in sealed ? sealed.parts : [sealed.data]) {
      for (let at = 0; at < text.length; at += BASE64_SLICE) {
        const length = slice.write(text.slice(at, at + BASE64_SLICE), 'base64');
        pieces.push(decipher.update(slice.subarray(0, length)));
      }
    }
  }
  decipher.final();
  return pieces;
}

/** Bytes run through the cipher at a time (a multiple of 3: its base64 is whole 4-character groups). */
const CIPHER_SLICE = 48 * 1024;
/** The base64 characters of a CIPHER_SLICE, which decode alone. */
const BASE64_SLICE = (CIPHER_SLICE / 3) * 4;

/**
 * Encrypts `data` slice by slice, each result written back over its input and its own memory
 * given back at once: a 10 MB file would otherwise leave 10 MB of them to the next collection.
 */
function inPlace(cipher: Cipher, data: Buffer): void {
  for (let at = 0; at < data.length; at += CIPHER_SLICE) {
    const slice = data.subarray(at, at + CIPHER_SLICE);
    const encrypted = cipher.update(slice);
    encrypted.copy(slice);
    releaseChunk(encrypted);
  }
}

/**
 * Sealing bound to a record (SPEC 5.4): what plugins get instead of the master key. A value
 * sealed for one record id cannot be unsealed as another's (the id is GCM associated data).
 */
export interface Sealer {
  seal(plaintext: Buffer | string, recordId: string): Sealed;
  /** seal() of a file given as pages, which it takes and encrypts where they lie (sealPages). */
  sealPages(pages: Buffer[], recordId: string): SealedPages;
  /** Throws when the value was sealed for another record, with another key, or altered. */
  unseal(sealed: Sealed, recordId: string): Buffer;
  /** unseal() of a file, as pieces: no copy of it joins them (unsealPieces). */
  unsealPieces(sealed: SealedFile, recordId: string): Buffer[];
}

export function createSealer(masterKey: Buffer): Sealer {
  return {
    seal: (plaintext, recordId) => seal(masterKey, plaintext, recordId),
    sealPages: (pages, recordId) => sealPages(masterKey, pages, recordId),
    unseal: (sealed, recordId) => unseal(masterKey, sealed, recordId),
    unsealPieces: (sealed, recordId) => unsealPieces(masterKey, sealed, recordId),
  };
}
