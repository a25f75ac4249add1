/**
 * @opco-proxy/plugin-hub: the instance side of the rate-limit coordinator (SPEC 1.1 steps 4 and
 * 9, D26-D30): `createHubAdmission`, the AdmissionProvider named 'hub', and the protocol it
 * speaks with the hub. The hub itself is @opco-proxy/hub-server.
 */
export * from './protocol.js';
export {
  createHubAdmission,
  configureHubAdmission,
  HubAdmission,
  DISCONNECTED_TOKEN,
  type HubAdmissionOptions,
} from './client/hub-admission.js';
export { HubConnection, type ConnectionState, type HubConnectionOptions } from './client/hub-connection.js';
export { LocalFallback, Rerouted } from './client/local-fallback.js';
export { UsageLedger } from './client/usage-ledger.js';
export { hubPlugin } from './plugin.js';
export type { HubPluginConfig } from './generated/config.js';
export { default } from './plugin.js';
