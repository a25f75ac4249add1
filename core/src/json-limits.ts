/**
 * Bounds on the JSON the service accepts, keeps and passes on. Hostile tenants and broken
 * upstreams can send values nested thousands of levels deep; every recursive walk (stringify,
 * canonical hashing, a store's key checks) would then overflow the stack or, for some, run for
 * ever. So depth is measured here once, iteratively, where a value enters, and refused there.
 */

/** Request bodies: a CERFA is five levels deep; 32 leaves room for any honest client. */
export const MAX_BODY_DEPTH = 32;
/** Upstream answers: deeper than this is unusable (D5 UPSTREAM_INVALID_RESPONSE). */
export const MAX_ANSWER_DEPTH = 64;
/** An upstream error body kept in `upstream` (SPEC 7) beyond this size is kept as truncated text. */
export const MAX_KEPT_ERROR_BYTES = 64 * 1024;
/** Characters of an unusable upstream answer kept for the operator and the client. */
export const KEPT_TEXT_CHARS = 2000;

/**
 * Nesting depth of a JSON-like value (a scalar is 0, `{}` and `[]` are 1), measured without
 * recursion; stops counting once `limit` is passed and returns `limit + 1`.
 */
export function jsonDepth(value: unknown, limit = Number.MAX_SAFE_INTEGER): number {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return 0;
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > deepest) {
      deepest = depth;
      if (deepest > limit) return limit + 1;
    }
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) {
      // Dates and bytes (Store values) are leaves: a Buffer's elements are not children.
      if (child !== null && typeof child === 'object' && !(child instanceof Date) && !ArrayBuffer.isView(child)) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** The first `KEPT_TEXT_CHARS` characters, marked when cut. */
export function truncatedText(text: string): string {
  return text.length <= KEPT_TEXT_CHARS ? text : `${text.slice(0, KEPT_TEXT_CHARS)}… (${text.length} characters, truncated)`;
}
