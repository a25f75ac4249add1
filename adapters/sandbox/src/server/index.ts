export { startSandbox, SANDBOX_DEFAULTS, ADVANCE_PATH } from './sandbox-server.js';
export type {
  AdvanceResult,
  ApiKeyAuth,
  Fault,
  FaultControl,
  HubGrantClaims,
  HubTokenCheck,
  HubTokenFailure,
  OAuthAuth,
  ReceivedPart,
  ReceivedRequest,
  ResolvedAuth,
  Sandbox,
  SandboxAuth,
  SandboxOptions,
  SandboxQuirks,
  SandboxShape,
  SandboxStats,
  TokenAnswerFields,
  TokenRequestRecord,
  TokenRequestStyle,
} from './types.js';
export { Dataset } from './dataset.js';
export type { DatasetOptions, NewDossier } from './dataset.js';
export { DOSSIER_ETATS, FACTURE_ETATS, STATE_TYPOS } from './records.js';
export type {
  DossierEtat,
  Echeance,
  FactureDossierLine,
  FactureEtat,
  FraisAnnexe,
  Organisme,
  SandboxCerfa,
  SandboxDossier,
  SandboxFacture,
} from './records.js';
export { DATA_HORIZON, FIRST_YEAR, LAST_YEAR } from './generator.js';
export { REFUSED_API_KEY } from './routes.js';
export { UPSTREAM_ROUTES } from './common-shape.js';
export { CLASSIC_ROUTES } from './classic-shape.js';
export { REFUSED_CLIENT_SECRET } from './oauth.js';
export { DEFAULT_AUTH } from './upstream-auth.js';
export { TOKEN_ROUTE } from './faults.js';
export { CFA_KEY_END_OF_VALIDITY, MAX_LISTE_NUMBERS } from './read-routes.js';
export { CLASSIC_MAX_NUMEROS, CLASSIC_UNKNOWN_DOSSIER, CLASSIC_VERSIONS } from './classic-read-routes.js';
export { CLASSIC_METADATA_PART } from './classic-write-routes.js';
export { CLASSIC_DOSSIER_ETATS, CLASSIC_FACTURE_ETATS } from './classic-states.js';
export { IRREGULAR_NAMES, camelToSnake, snakeToCamel } from './snake-case.js';
export { frenchToIso, isDateField, isoToFrench } from './french-dates.js';
export { HUB_DISCONNECTED, HUB_GRANT_LIFETIME_S, HUB_TOKEN_HEADER } from './hub-token.js';
export { ibanValid, luhnValid } from './identities.js';
