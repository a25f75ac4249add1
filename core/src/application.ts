/**
 * Everything core exports, for this project's own applications (server, hub-server, the adapter
 * kit's conformance runner), its tests and its benches: the kernel, configuration, metrics,
 * the edge. It follows no version and may change in any release; plugins, adapters and drivers
 * use the curated surface (index.ts) and its kits instead, and lint refuses them this one.
 */
export * from './index.js';
export * from './durable/index.js';
export * from './limits/index.js';
export * from './ports/driver-kit.js';
export { TestClock } from './clock.js';
export * from './profile/profile.js';
export * from './profile/profile-format.js';
export * from './clock.js';
export * from './upstream-auth/index.js';
export * from './profile/transforms.js';
export * from './profile/field-case.js';
export * from './ports/store.js';
export * from './ports/queue.js';
export * from './errors/errors.js';
export {
  KERNEL_ERRORS,
  KernelError,
  kernelError,
  kernelErrorMessage,
  isKernelError,
  type KernelErrorCode,
  type KernelErrorParams,
} from './errors/kernel-errors.js';
export * from './host/hooks.js';
export * from './host/seams.js';
export * from './host/events.js';
export * from './pipeline/call-context.js';
export * from './crypto/crypto.js';
export { releaseBuffer } from './http/resizable-buffer.js';
export * from './http/tenant.js';
export * from './config/config.js';
export { attributeError } from './config/config-layers.js';
export * from './plugin.js';
export * from './kernel.js';
export * from './host/drivers.js';
export { loadModule, packageName, type Bundled, type ModuleKind } from './host/module-loader.js';
export * from './pipeline/pipeline.js';
export * from './pipeline/upstream-client.js';
export * from './observability/metrics.js';
export { STORE_GAUGE, StoreAge, type AgeGaugeConfiguration } from './observability/store-gauge.js';
export * from './observability/logger.js';
export * from './profile/opco-directory.js';
export { RawJson, type OperationHandler, type OperationInput } from './http/operation-router.js';
export type { State } from './http/state.js';
export { createEmbeddedStore } from './store/embedded-store.js';
export { assertStorable, assertStorableUpdate } from './store/document-depth.js';
export { newestFirst, type Page, type PageRequest } from './store/newest-first.js';
export { createEmbeddedQueue } from './queue/embedded-queue.js';
export * from './queue/message-rules.js';
export { equalityFields, isPlainObject } from './store/filter-matching.js';
/** The embedded store's order of sorted reads, for a backend that merges several searches. */
export { inSortOrder } from './store/sort-order.js';
export { canonicalJson, canonicalJsonSha256 } from './crypto/canonical-json.js';
export { API_VERSION } from '@opco-proxy/schemas';
export { SERVICE_VERSION } from './host/version.js';
export { callVerdict, keyAccepted, type CallVerdict } from './pipeline/call-verdict.js';
export { TrustedProxies } from './http/client-address.js';
export { systemResolver, type HostResolver, type ResolvedAddress } from './http/host-resolver.js';
export { createGuardedServer, SERVER_LIMITS, type ServerLimits } from './http/connection-limits.js';
export { renderErrors } from './http/error-renderer.js';
export { AuditLog, AUDIT_COLLECTION, type AuditRecord, type AuditFilter, type AuditEntry } from './audit/audit-log.js';
export { exportAudit, type AuditExportOptions } from './audit/audit-export.js';
// The classes the main export names as types only (a plugin is handed them, never builds them).
export { Pipeline } from './pipeline/pipeline.js';
export { OpcoDirectory } from './profile/opco-directory.js';
