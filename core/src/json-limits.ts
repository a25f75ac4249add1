/**
 * Bounds on the JSON the service accepts, keeps and passes on. Hostile tenants and broken
 * upstreams can send values nested thousands of levels deep; every recursive walk (stringify,
 * canonical hashing, a store's key checks) would then overflow the stack or, for some, run for
 * ever. So depth is measured here once, where a value enters, and refused there.
 */

/** Request bodies: a CERFA is five levels deep; 32 leaves room for any honest client. */
export const MAX_BODY_DEPTH = 32;
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
  if (!(limit >= 0 && limit <= MAX_DEPTH_LIMIT)) throw new RangeError(`a depth limit is between 0 and ${MAX_DEPTH_LIMIT}`);
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
  return text.length <= KEPT_TEXT_CHARS ? text : `${text.slice(0, KEPT_TEXT_CHARS)}… (${text.length} characters, truncated)`;
}
