/**
 * Buffers for files (megabytes each) whose memory can be given back the moment they are done
 * with, rather than at V8's next garbage collection: an idle service may not run one for long,
 * and until then a decoded file would stay in its RSS. They are ES2024 resizable ArrayBuffers
 * (Node 20+): they grow in place (no copy as a file arrives) up to a maximum reserved as
 * address space only, and resizing one to 0 returns its pages at once. The chunks a request's body
 * is read in are given back too, once read (releaseChunk).
 */

/** The ES2024 members, absent from the ES2023 lib this code is typed with. */
interface ResizableArrayBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(byteLength: number): void;
  /** Node 22+ (absent from Node 20 without a V8 flag). */
  transfer?(byteLength: number): ArrayBuffer;
}

const Resizable = ArrayBuffer as unknown as new (
  byteLength: number,
  options: { maxByteLength: number },
) => ResizableArrayBuffer;

/** A buffer of `length` bytes that can grow in place (`resizeBuffer`) up to `maxLength`. */
export function resizableBuffer(length: number, maxLength: number): Buffer {
  const memory = new Resizable(length, { maxByteLength: maxLength });
  return Buffer.from(memory, 0, length);
}

/** The buffer over the same memory, resized to `length` (in place: no copy); within its maximum. */
export function resizeBuffer(buffer: Buffer, length: number): Buffer {
  const memory = buffer.buffer as ResizableArrayBuffer;
  memory.resize(length);
  return Buffer.from(memory, 0, length);
}

/**
 * Gives a resizable buffer's memory back now (it reads as empty afterwards, as does every view
 * of it); any other buffer is left to the garbage collector.
 */
export function releaseBuffer(buffer: Buffer): void {
  const memory = buffer.buffer as Partial<ResizableArrayBuffer>;
  if (memory.resizable === true) memory.resize!(0);
}

/**
 * Gives back now the memory of a chunk read for the last time (of a request's body, or a cipher's
 * output copied elsewhere), when it is the only view of an ArrayBuffer of its own (as Node's HTTP
 * parser and ciphers make one per chunk) and no I/O still reads it. Without this, a 10 MB
 * upload's 14 MB of chunks stay in the RSS beside the decoded file until the next collection,
 * which a process allocating little else does not run (bench/RESULTS.md, "The chunks of a
 * request's body, given back"). Detaching is ES2024's `transfer(0)`: Node 22 and later; on
 * Node 20 the chunk is left to the collector as before. A slice of a shared pool is never
 * detached, nor one the runtime refuses to detach.
 */
export function releaseChunk(chunk: Buffer): void {
  const memory = chunk.buffer as ResizableArrayBuffer;
  if (typeof memory.transfer !== 'function' || memory.resizable) return;
  if (chunk.byteOffset !== 0 || chunk.byteLength !== memory.byteLength || chunk.byteLength === 0) return;
  try {
    memory.transfer(0);
  } catch {
    // Not detachable (a buffer the runtime shares with native code): the collector frees it.
  }
}
