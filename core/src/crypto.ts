/**
 * The one crypto helper: hashing, HMAC signatures, AES-256-GCM sealing (SPEC 5.4) and random ids.
 * Everything else in the code base goes through these functions.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

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
  return randomBytes(bytes).toString('hex');
}

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
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (associatedData) cipher.setAAD(Buffer.from(associatedData));
  const data = joined(cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext) : plaintext), cipher.final());
  return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

/** Throws when the key is wrong or the record was tampered with (GCM authentication). */
export function unseal(key: Buffer, sealed: Sealed, associatedData?: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  if (associatedData) decipher.setAAD(Buffer.from(associatedData));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return joined(decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final());
}

/** GCM's final() gives no bytes: a file is then not copied a second time to join them. */
function joined(head: Buffer, tail: Buffer): Buffer {
  return tail.length === 0 ? head : Buffer.concat([head, tail]);
}

/**
 * Sealing bound to a record (SPEC 5.4): what plugins get instead of the master key. A value
 * sealed for one record id cannot be unsealed as another's (the id is GCM associated data).
 */
export interface Sealer {
  seal(plaintext: Buffer | string, recordId: string): Sealed;
  /** Throws when the value was sealed for another record, with another key, or altered. */
  unseal(sealed: Sealed, recordId: string): Buffer;
}

export function createSealer(masterKey: Buffer): Sealer {
  return {
    seal: (plaintext, recordId) => seal(masterKey, plaintext, recordId),
    unseal: (sealed, recordId) => unseal(masterKey, sealed, recordId),
  };
}
