/**
 * @opco-proxy/hub-server: the rate-limit coordinator (SPEC 5.8, D26-D30), the process
 * `opco-proxy hub --config FILE` runs (`runHub`), or embedded in a test (`startHub`). Instances
 * reach it through the `hub` plugin (@opco-proxy/plugin-hub), whose protocol it speaks.
 */
export {
  startHub,
  runHub,
  openHubStore,
  NOT_LEADER_CLOSE,
  type StartHubOptions,
  type RunningHub,
} from './hub-server.js';
export {
  HubLeadership,
  leaseMargin,
  DEFAULT_LEASE_MS,
  DEFAULT_RENEW_MS,
  type LeadershipView,
  type HubRole,
} from './hub-leadership.js';
export {
  parseHubConfig,
  loadHubConfig,
  readHubSecrets,
  HUB_DEFAULT_PORT,
  type HubServerConfig,
  type FailoverConfig,
  type HubSecrets,
  type HubStoreConfig,
} from './hub-config.js';
export { verifyGrantToken, DEFAULT_ISSUER, type GrantClaims } from './grant-token.js';
export {
  GrantScheduler,
  type AskInput,
  type InstanceHello,
  type JournalGrant,
  type LimitView,
  type SchedulerObserver,
  type SchedulerOptions,
  type IssuedGrant,
  type WaitingAsk,
} from './grant-scheduler.js';
export { GrantJournal } from './grant-journal.js';
export { AdaptiveLimit, DEFAULT_ADAPTIVE, type AdaptiveOptions } from './adaptive-limit.js';
