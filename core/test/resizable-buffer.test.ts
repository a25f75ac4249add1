// Issue 11 (memory): a file's pages and the chunks its body is read in are given back at once, not
// at V8's next collection; nothing another view or a pool shares is ever touched.
import t from 'tap';
import { createCipheriv } from 'node:crypto';
import { releaseBuffer, releaseChunk, resizableBuffer } from '../src/http/resizable-buffer.js';

const canDetach = typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === 'function';

t.test('a chunk with an ArrayBuffer of its own is given back where the runtime can (Node 22+)', async (t) => {
  const chunk = Buffer.alloc(65536, 1);
  const cipherOutput = createCipheriv('aes-256-gcm', Buffer.alloc(32), Buffer.alloc(12)).update(Buffer.alloc(49152));
  releaseChunk(chunk);
  releaseChunk(cipherOutput);
  if (canDetach) {
    t.equal(chunk.buffer.byteLength, 0, 'the parser-like chunk is detached');
    t.equal(cipherOutput.buffer.byteLength, 0, "a cipher's output is detached");
  } else {
    t.equal(chunk.buffer.byteLength, 65536, 'Node 20: left to the collector');
  }
});

t.test('what others share is never detached: pooled slices, sub-views, resizable pages, empty buffers', async (t) => {
  const pooled = Buffer.from('abc');
  t.ok(pooled.buffer.byteLength > pooled.length, 'a slice of the shared pool');
  const whole = Buffer.alloc(8192, 2);
  const part = whole.subarray(0, 4096);
  const page = resizableBuffer(1024, 4096);
  page.fill(3);
  for (const buffer of [pooled, part, page, Buffer.alloc(0)]) releaseChunk(buffer);
  t.equal(pooled.toString(), 'abc');
  t.equal(whole.buffer.byteLength, 8192);
  t.equal(part[0], 2);
  t.equal(page.length, 1024, 'a resizable page is releaseBuffer’s, not releaseChunk’s');
  releaseBuffer(page);
  t.equal(page.length, 0, 'releaseBuffer gives a resizable page back');
});
