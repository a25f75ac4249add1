/**
 * Bounds on the JSON the service accepts, keeps and passes on. Hostile tenants and broken
 * upstreams can send values nested thousands of levels deep; every recursive walk (stringify,
 * canonical hashing, a store's key checks) would then overflow the stack or, for some, run for
 * ever. So depth is measured here once, where a value enters, and refused there: a request
 * body's as it streams in, with its other bounds (http/body-bounds.ts), anything else by jsonDepth.
 */

/** Request bodies: a CERFA is five levels deep; 32 leaves room for any honest client. */
export const MAX_BODY_DEPTH = 32;

/**
 * How much a request body may hold, counted as it streams in (http/body-bounds.ts) and refused
 * there, before the body is parsed. Configurable: the keys of the kernel config's `limits` by the
 * same names, whose defaults are these (a test keeps them in step).
 *
 * Sized from the spec's bodies, then from what a body costs the process that serves it. A CERFA
 * holds about 150 values in a few KB, its largest object about 40 fields; a facture's `lignes` are a
 * handful, each 8 values at most; `objets` and `events` fewer. What a body costs grows with its
 * values (validation, the idempotency hash, the sealing, the profile's transforms and the
 * upstream call each go over all of them, each at once) and with its JSON (parsed at once): with
 * 90,000 values in 4 MiB, the event loop was held 100 to 280 ms at a time; with 20,000 in 1 MiB,
 * under 100 ms (docs/operations.md, "Request bounds"). A facture of 2,000 lignes (16,000 values,
 * 310 KB) passes.
 */
export interface BodyBounds {
  /** Values of the whole body: every object, array, string, number, boolean and null. */
  bodyValues: number;
  /** Fields of any one object (the body itself and `_files` included). */
  objectKeys: number;
  /** Items of any one array (`lignes`, `objets`, `events`, ...). */
  arrayItems: number;
  /**
   * Bytes of the body's JSON beside the contents of its `_files` (cut out as they arrive): what
   * JSON.parse reads at once, about 13 ms a MiB for the slowest text (strings of escapes).
   */
  jsonBytes: number;
}

export const DEFAULT_BODY_BOUNDS: Readonly<BodyBounds> = Object.freeze({
  bodyValues: 20_000,
  objectKeys: 1_000,
  arrayItems: 10_000,
  jsonBytes: 1024 * 1024,
});

/** Upstream answers: deeper than this is unusable (D5 UPSTREAM_INVALID_RESPONSE). */
export const MAX_ANSWER_DEPTH = 64;
/** An upstream error body kept in `upstream` (SPEC 7) beyond this size is kept as truncated text. */
export const MAX_KEPT_ERROR_BYTES = 64 * 1024;
/** Characters of an unusable upstream answer kept for the operator and the client. */
export const KEPT_TEXT_CHARS = 2000;

/** Deepest limit jsonDepth accepts: its walk recurses once per level, up to `limit + 1`. */
const MAX_DEPTH_LIMIT = 1024;

/**
 * Nesting depth of a JSON-like value (a scalar is 0, `{}` and `[]` are 1); stops counting once
 * `limit` is passed and returns `limit + 1`. It recurses, but never deeper than `limit + 1`
 * frames, so a hostile value cannot overflow the stack; and it allocates nothing, where the
 * stack of [node, depth] pairs it replaced cost five times as much on a 12 KB answer, which
 * every upstream answer, request body and store write pays (bench/RESULTS.md).
 */
export function jsonDepth(value: unknown, limit: number): number {
  if (!(limit >= 0 && limit <= MAX_DEPTH_LIMIT))
    throw new RangeError(`a depth limit is between 0 and ${MAX_DEPTH_LIMIT}`);
  return isContainer(value) ? depthBelow(value as object, 1, limit) : 0;
}

/** Dates and bytes (Store values) are leaves: a Buffer's elements are not children. */
function isContainer(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !(value instanceof Date) && !ArrayBuffer.isView(value);
}

function depthBelow(node: object, depth: number, limit: number): number {
  if (depth > limit) return depth;
  let deepest = depth;
  // Two loops rather than one over Object.values, and no closure: nothing allocated per node.
  // for...in sees inherited keys only on a polluted prototype, which can only look deeper.
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length && deepest <= limit; i++) deepest = deeper(node[i], depth, deepest, limit);
  } else {
    for (const key in node) {
      deepest = deeper((node as Record<string, unknown>)[key], depth, deepest, limit);
      if (deepest > limit) break;
    }
  }
  return deepest;
}

function deeper(child: unknown, depth: number, deepest: number, limit: number): number {
  if (!isContainer(child)) return deepest;
  return Math.max(deepest, depthBelow(child as object, depth + 1, limit));
}

/** The first `KEPT_TEXT_CHARS` characters, marked when cut. */
export function truncatedText(text: string): string {
  return text.length <= KEPT_TEXT_CHARS
    ? text
    : `${text.slice(0, KEPT_TEXT_CHARS)}… (${text.length} characters, truncated)`;
}
