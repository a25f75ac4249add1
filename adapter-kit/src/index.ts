/**
 * @opco-proxy/adapter-kit: what an OPCO adapter package needs besides core — the conformance
 * suite its tests run in one call, and the starter that writes a new adapter package.
 */
export {
  conformance,
  checkAdapter,
  AREAS,
  type ConformanceOptions,
  type ConformanceReport,
  type TestLike,
} from './conformance.js';
export { describeFinding, type Finding } from './findings.js';
export {
  readFixtures,
  routeDir,
  REQUEST_SCHEMA_FILE,
  TOKEN_FIXTURE,
  type Fixture,
  type FixtureSet,
  type RouteFixtures,
} from './fixtures.js';
export { SAMPLE_REQUESTS, SAMPLE_PDF, type SampleRequest } from './request-corpus.js';
export { DOSSIER_STATES, FACTURE_STATES } from './answer-checks.js';
export type { AuthInput } from './replay.js';
export { createAdapterPackage, starterNames, writeStarter } from './starter.js';
