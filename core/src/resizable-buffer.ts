/**
 * Buffers for files (megabytes each) whose memory can be given back the moment they are done
 * with, rather than at V8's next garbage collection: an idle service may not run one for long,
 * and until then a decoded file would stay in its RSS. They are ES2024 resizable ArrayBuffers
 * (Node 20+): they grow in place (no copy as a file arrives) up to a maximum reserved as
 * address space only, and resizing one to 0 returns its pages at once.
 */

/** The ES2024 members, absent from the ES2023 lib this code is typed with. */
interface ResizableArrayBuffer extends ArrayBuffer {
  readonly resizable: boolean;
  readonly maxByteLength: number;
  resize(byteLength: number): void;
}

const Resizable = ArrayBuffer as unknown as new (byteLength: number, options: { maxByteLength: number }) => ResizableArrayBuffer;

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
