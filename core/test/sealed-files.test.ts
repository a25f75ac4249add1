// SPEC 5.4, D15, issue 11 (memory): a file sealed page by page (its ciphertext kept as bytes)
// opens as pieces equal to it, bound to its record; files stored as text by earlier versions
// still open; a body holding decoded files hashes as the base64 text the client sent.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import {
  canonicalJson,
  canonicalJsonSha256,
  createSealer,
  seal,
  sealPages,
  sha256Hex,
  unsealPieces,
} from '../src/application.js';
import { resizableBuffer } from '../src/http/resizable-buffer.js';

const key = Buffer.alloc(32, 3);
const PAGE = 768 * 1024;

/** A file as the request decoder gives it: full pages of PAGE bytes (resizable), then the rest. */
function pages(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += PAGE) {
    const page = resizableBuffer(Math.min(PAGE, bytes.length - at), PAGE);
    bytes.copy(page, 0, at, at + page.length);
    out.push(page);
  }
  return out;
}

t.test('a file sealed by pages opens as the same bytes; its pages are taken and hold ciphertext', async (t) => {
  const sealer = createSealer(key);
  for (const size of [1, 1000, PAGE, PAGE + 1, 3 * PAGE - 7]) {
    const bytes = randomBytes(size);
    const given = pages(bytes);
    const pageCount = given.length;
    const first = given[0];
    const sealed = sealer.sealPages(given, 'job-1:cerfa');
    t.equal(given.length, 0, `${size} bytes: the pages are taken out of the caller's array`);
    t.equal(sealed.pages.length, pageCount, 'one sealed page per page');
    t.equal(sealed.pages[0], first, 'encrypted where it lay: the same buffer, not a copy');
    t.equal(
      sealed.pages.reduce((n, page) => n + page.length, 0),
      size,
      'ciphertext as long as the file',
    );
    t.notOk(Buffer.concat(sealed.pages).includes(bytes.subarray(0, 64)), 'no plaintext in the pages');
    const pieces = sealer.unsealPieces(sealed, 'job-1:cerfa');
    t.ok(Buffer.concat(pieces).equals(bytes), `${size} bytes back`);
    t.throws(() => sealer.unsealPieces(sealed, 'job-2:cerfa'), `${size} bytes: bound to its record`);
  }
});

t.test('an altered page or a missing one is refused', async (t) => {
  const sealer = createSealer(key);
  const sealed = sealer.sealPages(pages(randomBytes(2 * PAGE + 10)), 'r');
  const [a, b, c] = sealed.pages as [Buffer, Buffer, Buffer];
  const flipped = Buffer.from(b);
  flipped[5] ^= 1;
  t.throws(() => sealer.unsealPieces({ ...sealed, pages: [a, flipped, c] }, 'r'), 'a flipped bit');
  t.throws(() => sealer.unsealPieces({ ...sealed, pages: [a, b] }, 'r'), 'a page dropped');
  t.throws(() => sealer.unsealPieces({ ...sealed, pages: [b, a, c] }, 'r'), 'pages swapped');
  t.ok(Buffer.concat(sealer.unsealPieces(sealed, 'r')).length === 2 * PAGE + 10, 'the unaltered pages still open');
});

t.test('a file sealed as base64 parts by an earlier version still opens, and checks its parts', async (t) => {
  const bytes = randomBytes(2 * PAGE + 10);
  // What sealPages stored before files were kept as bytes: one stream, each page's ciphertext as base64.
  const sealed = sealPages(key, pages(bytes), 'old-job:cerfa');
  const parts = sealed.pages.map((page) => page.toString('base64'));
  const earlier = { iv: sealed.iv, tag: sealed.tag, parts };
  t.ok(Buffer.concat(unsealPieces(key, earlier, 'old-job:cerfa')).equals(bytes));
  const flipped = Buffer.from(parts[1], 'base64');
  flipped[5] ^= 1;
  t.throws(
    () => unsealPieces(key, { ...earlier, parts: [parts[0], flipped.toString('base64'), parts[2]] }, 'old-job:cerfa'),
    'a flipped bit',
  );
  t.throws(() => unsealPieces(key, { ...earlier, parts: parts.slice(0, 2) }, 'old-job:cerfa'), 'a part dropped');
});

t.test('a file sealed whole by an earlier version still opens as pieces', async (t) => {
  const bytes = randomBytes(200_000);
  const sealed = seal(key, bytes, 'old-job:cerfa');
  t.ok(Buffer.concat(unsealPieces(key, sealed, 'old-job:cerfa')).equals(bytes));
});

t.test('a body with decoded files hashes as the base64 text it came as', async (t) => {
  const file = randomBytes(3 * PAGE + 2);
  const asText = {
    numero: 'F-1',
    lignes: [{ b: 1, a: 2 }],
    _files: { facture: file.toString('base64'), autre: 'QUJD' },
  };
  const asPages = {
    numero: 'F-1',
    lignes: [{ b: 1, a: 2 }],
    _files: { facture: pages(file), autre: [Buffer.from('ABC')] },
  };
  const before = sha256Hex(canonicalJson(asText)); // what earlier versions stored for an Idempotency-Key
  t.equal(canonicalJsonSha256(asPages), before, 'pages hash as their base64');
  t.equal(canonicalJsonSha256({ ...asPages, _files: { ...asPages._files, facture: file } }), before, 'one buffer too');
  t.equal(canonicalJson(asPages), canonicalJson(asText));
  t.not(
    canonicalJsonSha256({ ...asPages, _files: { ...asPages._files, autre: [Buffer.from('ABD')] } }),
    before,
    'another file, another hash',
  );
  for (const value of [{}, [], null, 'x', { b: [1, { d: undefined, c: '\u00e9' }], a: [] }])
    t.equal(canonicalJsonSha256(value), sha256Hex(canonicalJson(value)), JSON.stringify(value));
});
