/**
 * What a store or queue driver builds on (`@opco-proxy/core/driver-kit`, versioned with
 * PLUGIN_API_VERSION): the checks every backend applies to documents and messages the same way,
 * the embedded store's filter and sort semantics for a backend that evaluates some itself, and the
 * queue's defaults. The ports themselves (store.ts, queue.ts) are in the main export.
 */
export { assertStorable, assertStorableUpdate } from '../store/document-depth.js';
export { equalityFields, isPlainObject } from '../store/filter-matching.js';
/** The embedded store's order of sorted reads, for a backend that merges several searches. */
export { inSortOrder } from '../store/sort-order.js';
export * from '../queue/message-rules.js';
