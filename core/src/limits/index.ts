/**
 * Every budget and limit the service applies, in one folder (issue 41), on one rolling window
 * (rolling-window.ts). Where a 429 RATE_LIMITED comes from, with its Retry-After:
 *
 * | source | what it bounds | file |
 * |---|---|---|
 * | the store budget, no hub | an opcoId's upstream calls per window, every instance together (D11, D12); a client read waits at most CLIENT_WAIT_MAX_MS first | store-budget.ts |
 * | the unproven slice | the calls of keys the upstream has not accepted yet, the last slots of each window (issue 27, P13) | store-budget.ts (Lane), tenant-standing.ts |
 * | the hub's grants | the same budget shared by a fleet through the hub (D28); a client read waits `maxWaitMs` for a grant | plugins/hub/src/client/hub-admission.ts, hub-server/src/grant-budget.ts |
 * | the tenant's rate | one API key's requests per second (D6) | request-rate.ts |
 * | the address limits | unproven tenants' requests and failed authentications per client address; wrong operator keys back off (issue 27) | address-limits.ts |
 * | connections per address | open connections of one client address (the public edge) | ../http/connection-limits.ts |
 * | what tenants hold | unproven tenants' records per address, one tenant's pending jobs and file bytes (issues 37, 38) | held-work.ts |
 * | deferred background work | a job step that found no budget within BACKGROUND_HOLD_MS is handed back, not failed | store-budget.ts |
 * | test notifications | `POST /webhooks/{id}/test` per API key and minute | plugins/webhooks/src/webhook-routes.ts (a RequestRate) |
 * | the upstream itself | its own 429, mapped by the profile's error rules and passed on | ../pipeline/upstream-client.ts |
 *
 * Where work waits instead of being refused: background calls wait for the store budget
 * (`acquireWaiting`), for a hub grant, or for the hub's fallback when the hub is unreachable
 * (local-bucket.ts, D30), served in FairQueue order (fair-queue.ts: priority, then tenants in
 * turn, D11) and paced so that one tenant's sync leaves others their share (budget-share.ts); a
 * worker's slots are shared between tenants (../durable/tenant-slots.ts); a job step answered 429
 * waits its Retry-After without spending an attempt (plugins/jobs/src/step-failure.ts).
 * Bounds on the JSON itself (depth, size: 400 and 413) are json-limits.ts.
 */
export * from './rolling-window.js';
export * from './admission.js';
export * from './fair-queue.js';
export * from './local-bucket.js';
export * from './store-budget.js';
export * from './json-limits.js';
export { TenantStanding, LOCAL_RECHECK_MS, STANDING_SWEEP_MS, type Standing } from './tenant-standing.js';
export { HeldWork, NEAR_RECOUNT_MS, type HeldBounds, type HeldKind, type HeldRecords } from './held-work.js';
export { AddressLimits, addressKey, type AddressLimitOptions, type AddressRefusal } from './address-limits.js';
export { RequestRate } from './request-rate.js';
