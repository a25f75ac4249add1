/**
 * @opco-proxy/plugin-hub: the rate-limit coordinator (SPEC 1.1 steps 4 and 9, 5.8; D26-D30).
 *
 * Server side: `startHub` / `runHub` (the `opco-proxy hub --config FILE` process).
 * Instance side: `createHubAdmission`, the AdmissionProvider named 'hub'.
 */
export * from './protocol.js';
export { startHub, runHub, openHubStore, type StartHubOptions, type RunningHub } from './server/hub-server.js';
export { parseHubConfig, loadHubConfig, readHubSecrets, HUB_DEFAULT_PORT, type HubConfig, type HubSecrets, type HubStoreConfig } from './server/hub-config.js';
export { verifyGrantToken, DEFAULT_ISSUER, type GrantClaims } from './server/grant-token.js';
export { GrantScheduler, type AskInput, type InstanceHello, type JournalGrant, type LimitView, type SchedulerObserver, type SchedulerOptions, type IssuedGrant, type WaitingAsk } from './server/grant-scheduler.js';
export { AdaptiveLimit, DEFAULT_ADAPTIVE, type AdaptiveOptions } from './server/adaptive-limit.js';
export { createHubAdmission, configureHubAdmission, HubAdmission, DISCONNECTED_TOKEN, type HubAdmissionOptions, type HubClientConfig } from './client/hub-admission.js';
export { HubConnection, type ConnectionState, type HubConnectionOptions } from './client/hub-connection.js';
export { LocalFallback } from './client/local-fallback.js';
export { hubPlugin } from './plugin.js';
export { default } from './plugin.js';
