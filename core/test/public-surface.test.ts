// The curated surface (core/src/index.ts and its kits) is what plugins, adapters and drivers out
// of this tree rely on: a name added, removed or renamed shows here, and one removed or changed in
// meaning is a new PLUGIN_API_VERSION (docs/architecture.md, "Core's public surface").
import t from 'tap';

const SURFACE: Array<[string, string, string[]]> = [
  ['@opco-proxy/core', '../src/index.js', [
    'API_VERSION', 'ConfigError', 'DuplicateKeyError', 'ERROR_CODES', 'KernelError', 'MAX_DOCUMENT_DEPTH',
    'MetricsWindow', 'PLUGIN_API_VERSION', 'PRIORITY', 'PROFILE_FORMAT_VERSION', 'QueueUnavailableError',
    'ROUTE_KEYS', 'RawJson', 'SERVICE_VERSION', 'STATE_CORRECTIONS', 'STATE_KEYS', 'SUPPORTED_PLUGIN_APIS',
    'ServiceError', 'StoreUnavailableError', 'UNAVAILABLE_RETRY_AFTER_S', 'apiKeyHeader', 'applyTransforms',
    'asServiceError', 'camelToSnake', 'canonicalJson', 'canonicalJsonSha256', 'correctStates',
    'createEmbeddedQueue', 'createEmbeddedStore', 'createError', 'createLogger', 'dateFormat', 'definePlugin',
    'defineProfile', 'dropNulls', 'entrySecret', 'entryString', 'errorCodeSpec', 'errorCodes', 'fieldRenamer',
    'hmacSha256Base64', 'hmacSha256Hex', 'isKernelError', 'isRetriedByWorkers', 'isRetryableStatus',
    'isServiceError', 'isUnavailable', 'kernelError', 'mapValues', 'oauthClientCredentials', 'pageFrom',
    'randomHex', 'releaseBuffer', 'rename', 'renameKeys', 'renumber', 'safeEqualHex', 'safeEqualText',
    'setDefaults', 'settlesBy', 'sha256Hex', 'systemClock', 'systemResolver', 'tenantHash', 'toErrorBody',
    'toString', 'trim', 'truncatedText', 'uppercase', 'wrapBareArray',
  ]],
  ['@opco-proxy/core/durable', '../src/durable/index.js', [
    'LeaseHeld', 'LeaseLost', 'LeasedRecords', 'PeriodicTask', 'RetryPolicy', 'SLOT_WAIT_MS', 'TenantSlots',
    'newestFirst', 'overShareDelayMs', 'unleased',
  ]],
  ['@opco-proxy/core/limits', '../src/limits/index.js', [
    'AddressLimits', 'BACKGROUND_HOLD_MS', 'CALL_ALLOWANCE_MAX_MS', 'CALL_ALLOWANCE_SHARE', 'CLIENT_RESERVE',
    'CLIENT_WAIT_MAX_MS', 'DEFAULT_BODY_BOUNDS', 'FairQueue', 'HeldWork', 'KEPT_TEXT_CHARS',
    'LOCAL_RECHECK_MS', 'LaneQueue', 'LocalBucket', 'MAX_ANSWER_DEPTH', 'MAX_BODY_DEPTH',
    'MAX_KEPT_ERROR_BYTES', 'NEAR_RECOUNT_MS', 'RequestRate', 'RollingWindow', 'STANDING_SWEEP_MS',
    'StoreBudgetAdmission', 'TenantStanding', 'UpstreamBudget', 'addressKey', 'freeBefore', 'jsonDepth',
    'leavesWindowAt', 'truncatedText', 'unprovenSlice',
  ]],
  ['@opco-proxy/core/driver-kit', '../src/ports/driver-kit.js', [
    'DEFAULT_PREFETCH', 'DEFAULT_PRIORITY', 'DEFAULT_REDELIVERY_DELAY_MS', 'assertStorable',
    'assertStorableUpdate', 'checkConsume', 'checkPublish', 'equalityFields', 'inSortOrder', 'isPlainObject',
  ]],
  ['@opco-proxy/core/testing', '../src/testing/index.js', [
    'TestClock', 'eventually', 'startRelay',
  ]],
];

for (const [entry, file, names] of SURFACE) {
  t.test(`${entry} exports exactly its listed values`, async (t) => {
    const module = (await import(file)) as Record<string, unknown>;
    t.strictSame(Object.keys(module).sort(), names, `update this list, and PLUGIN_API_VERSION when a name goes or changes meaning`);
  });
}

t.test('the main export leaves the kernel, configuration and the kits out', async (t) => {
  const main = (await import('../src/index.js')) as Record<string, unknown>;
  for (const internal of ['createKernel', 'resolveConfig', 'LocalBucket', 'LeasedRecords', 'inSortOrder', 'checkPublish', 'TestClock']) {
    t.notOk(internal in main, `${internal} is not in the main export`);
  }
  const application = (await import('../src/application.js')) as Record<string, unknown>;
  for (const name of Object.keys(main)) t.ok(name in application, `/application holds ${name} too`);
});
