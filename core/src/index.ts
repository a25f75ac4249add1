/**
 * @opco-proxy/core's public surface: what a plugin, an adapter or a driver author may rely on,
 * versioned with PLUGIN_API_VERSION (a name removed or changed here is a new version), in the
 * manner of undici's curated index. The kits behind it are subpath exports, covered by the same
 * version: `/durable` (leased records, retries, sweeps, tenant slots, pages), `/limits` (budgets,
 * rolling window, fair queues, rates), `/driver-kit` (what a store or queue driver builds on),
 * `/testing` (TestClock, eventually, a TCP relay; `/store-contract` and `/queue-contract`, a
 * driver's contract suites). `/application` is everything, for this project's own applications
 * (server, hub-server, the adapter kit's runner): it follows no version, and lint refuses it to
 * plugins and drivers (eslint.config.js). docs/architecture.md lists the surface.
 */

// The plugin contract: what a plugin exports and what the kernel hands it.
export {
  definePlugin,
  PLUGIN_API_VERSION,
  SUPPORTED_PLUGIN_APIS,
  type Plugin,
  type PluginApi,
  type ProcessRole,
  type RecoverySpec,
} from './plugin.js';
export type { HookHandlers, HookName } from './host/hooks.js';
export type { SeamName, Seams } from './host/seams.js';
export type { DomainEvent } from './host/events.js';
export type { EventType, AdmissionState, QueueDepth, AuditRecord } from '@opco-proxy/schemas';
export type { AdmissionLease, AdmissionProvider, AdmissionRequest, UpstreamOutcome } from './limits/admission.js';
export type { HeldBounds, HeldKind, HeldRecords } from './limits/held-work.js';
export type { OperationHandler, OperationInput } from './http/operation-router.js';
export { RawJson } from './http/operation-router.js';
export type { State } from './http/state.js';
export { MetricsWindow, type PluginMetrics, type WindowSnapshot, type CallOutcome } from './observability/metrics.js';
export type { Pipeline } from './pipeline/pipeline.js';
export {
  PRIORITY,
  type CachedAnswer,
  type CallContext,
  type FileContent,
  type Opco,
  type Tenant,
  type UpstreamAnswer,
} from './pipeline/call-context.js';
export type { OpcoDirectory, CallInput } from './profile/opco-directory.js';
export { createLogger, type Logger } from './observability/logger.js';
export { SERVICE_VERSION } from './host/version.js';
export { API_VERSION } from '@opco-proxy/schemas';

// The adapter contract: profiles, their transforms and upstream authentication.
export * from './profile/profile.js';
export { PROFILE_FORMAT_VERSION } from './profile/profile-format.js';
export * from './profile/transforms.js';
export * from './profile/field-case.js';
export * from './upstream-auth/index.js';

// The ports, the drivers' contract and the embedded backends.
export * from './ports/store.js';
export * from './ports/queue.js';
export type { DriverContext, QueueDriver, QueueSection, StoreDriver, StoreSection } from './host/drivers.js';
export { createEmbeddedStore } from './store/embedded-store.js';
export { createEmbeddedQueue } from './queue/embedded-queue.js';

// Errors, time, crypto, hosts.
export * from './errors/errors.js';
export {
  ConfigError,
  KernelError,
  kernelError,
  isKernelError,
  type KernelErrorCode,
  type KernelErrorParams,
} from './errors/kernel-errors.js';
export { settlesBy, systemClock, type Clock, type Timer } from './clock.js';
export {
  hmacSha256Base64,
  hmacSha256Hex,
  randomHex,
  safeEqualHex,
  safeEqualText,
  sha256Hex,
  type Sealed,
  type SealedFile,
  type SealedPages,
  type SealedParts,
  type Sealer,
} from './crypto/crypto.js';
export { canonicalJson, canonicalJsonSha256 } from './crypto/canonical-json.js';
export { releaseBuffer } from './http/resizable-buffer.js';
export { tenantHash } from './http/tenant.js';
export { truncatedText } from './limits/json-limits.js';
export { systemResolver, type HostResolver, type ResolvedAddress } from './http/host-resolver.js';
