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
// What only the applications use: the kernel and its configuration, the pipeline's parts, the
// edge, metrics and logs, the audit log, the history of counts.
export * from './kernel.js';
export * from './config/config.js';
export { attributeError } from './config/config-layers.js';
export * from './profile/profile-format.js';
export { OpcoDirectory, loadProfile, type CallInput } from './profile/opco-directory.js';
// Named, not starred: the main export names these two classes as types only (a plugin is handed
// them, never builds them), and a starred value would lose to that type-only name.
export { Pipeline, type PipelineDeps } from './pipeline/pipeline.js';
export * from './pipeline/upstream-client.js';
export { callVerdict, keyAccepted, type CallVerdict } from './pipeline/call-verdict.js';
export * from './crypto/crypto.js';
export * from './http/tenant.js';
export { TrustedProxies } from './http/client-address.js';
export { createGuardedServer, SERVER_LIMITS, type ServerLimits } from './http/connection-limits.js';
export { renderErrors } from './http/error-renderer.js';
export * from './observability/metrics.js';
export * from './observability/logger.js';
export { STORE_GAUGE, StoreAge, type AgeGaugeConfiguration } from './observability/store-gauge.js';
export * from './host/hooks.js';
export * from './host/seams.js';
export * from './host/drivers.js';
export { loadPlugins } from './plugin.js';
export { loadModule, packageName, type Bundled, type ModuleKind } from './host/module-loader.js';
export { KERNEL_ERRORS, kernelErrorMessage } from './errors/kernel-errors.js';
export { AuditLog, AUDIT_COLLECTION, type AuditFilter, type AuditEntry } from './audit/audit-log.js';
export { exportAudit, type AuditExportOptions } from './audit/audit-export.js';
export * from './observability/history-log.js';
export { HistoryRecorder, HISTORY_SOURCES, type HistoryRecorderDeps } from './observability/history-recorder.js';
export { HistoryReader, MAX_HISTORY_POINTS, type HistoryReaderDeps } from './observability/history-reader.js';
