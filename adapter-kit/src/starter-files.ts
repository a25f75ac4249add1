/**
 * The files the starter writes: a profile skeleton for an upstream shaped like the common API of
 * SPEC 4.16 (so it runs at once against the sandbox), answers in that shape as fixtures, the
 * upstream request schemas they imply, and the conformance test. Each file says what to change
 * for the real upstream.
 */
import { readFileSync } from 'node:fs';
import { PROFILE_FORMAT_VERSION } from '@opco-proxy/core';

/**
 * The kit's own package.json (shipped in every package): a new adapter's peer range on core is
 * the line of the core this kit is built and released with, so it stays right at each release.
 */
const KIT_PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};
const caret = (version: string) => `^${version.replace(/^[\^~]/, '')}`;
/** The range an adapter package declares on @opco-proxy/core as a peer dependency (the bundled adapters declare the same). */
export const CORE_PEER_RANGE = caret(KIT_PACKAGE.dependencies['@opco-proxy/core']);

/** The integrator's guide, linked from what the starter prints and writes. */
export const ADAPTERS_GUIDE = 'https://github.com/opco-proxy/opco-proxy/blob/main/docs/adapters.md';

export interface StarterNames {
  /** npm package name. */
  packageName: string;
  /** Profile id. */
  id: string;
}

export function packageJson(names: StarterNames): string {
  return `${JSON.stringify(
    {
      name: names.packageName,
      version: '0.1.0',
      description: `OPCO adapter ${names.id} for opco-proxy`,
      // How operators and the registry's search find adapters.
      keywords: ['opco-proxy', 'opco-proxy-adapter'],
      engines: { node: '>=20.19' },
      type: 'module',
      main: 'dist/src/index.js',
      types: 'dist/src/index.d.ts',
      exports: { '.': './dist/src/index.js' },
      files: ['dist/src', 'README.md'],
      scripts: { build: 'tsc -p .', prepack: 'tsc -p .', test: 'tsc -p . && tap "dist/test/**/*.test.js"' },
      tap: { 'disable-coverage': true, plugin: ['!@tapjs/typescript'] },
      peerDependencies: { '@opco-proxy/core': CORE_PEER_RANGE },
      // A scoped package is published private by default: an adapter is for every operator.
      ...(names.packageName.startsWith('@') ? { publishConfig: { access: 'public' } } : {}),
      devDependencies: {
        '@opco-proxy/adapter-kit': caret(KIT_PACKAGE.version),
        '@opco-proxy/core': CORE_PEER_RANGE,
        '@types/node': '^20.19.43',
        tap: '^21.8.0',
        typescript: '^5.9.3',
      },
    },
    null,
    2,
  )}\n`;
}

/** Standalone: the package builds the same inside a clone of opco-proxy and on its own. */
export const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      strict: true,
      declaration: true,
      sourceMap: true,
      rootDir: '.',
      outDir: 'dist',
      skipLibCheck: true,
      types: ['node'],
    },
    include: ['src', 'test'],
  },
  null,
  2,
)}\n`;

export const GITIGNORE = 'node_modules/\ndist/\n*.tgz\n';

export function profileSource(names: StarterNames): string {
  return `/**
 * The upstream profile of ${names.id}: data first (SPEC 1 rule 5). This skeleton describes an
 * upstream shaped like the common API of SPEC 4.16 (the sandbox's default shape), so it runs as
 * it is; change each line to what your OPCO's API does, record its answers in fixtures/, and let
 * \`npm test\` (the adapter kit) tell you what is still wrong. docs/adapters.md walks through it.
 */
import { type AdapterModule, correctStates, dateFormat, defineProfile, dropNulls, oauthClientCredentials, wrapBareArray } from '@opco-proxy/core';

/** The CERFA dates the upstream wants as YYYY-MM-DD (a client may send ISO timestamps, D31). */
const DOSSIER_DATES = ['cerfa.apprenti.dateNaissance', 'cerfa.contrat.dateDebutContrat', 'cerfa.contrat.dateFinContrat'];

export const profile = defineProfile({
  // The profile format this adapter is written for: a service that does not read it refuses it at start.
  formatVersion: ${PROFILE_FORMAT_VERSION},
  id: '${names.id}',
  // TODO: the API versions your upstream paths call (GET /{opcoId}/status reports them).
  versions: ['v1'],
  // TODO: what the upstream allows your publisher credentials, shared by every CFA.
  rateLimit: { limit: 60, windowMs: 60_000 },
  // TODO: no more than the upstream's liste route takes in one call (at most 50; 50 if left out).
  sync: { batchSize: 50 },
  // How often the etats routes are polled (five minutes if left out; operators may override it).
  polling: { intervalMs: 300_000 },
  // TODO: how the upstream issues tokens: request 'form' | 'basic' | 'json', the answer's field
  // names (tokenField, expiresInField); or apiKeyHeader({header}) for a static key.
  auth: oauthClientCredentials({ request: 'form' }),
  // TODO: upstream answers that mean something else than their status says, e.g.
  // { status: 400, body: /inconnu/, routes: ['GET /dossiers'], code: 'NOT_FOUND' }.
  errors: [],
  // TODO: how the upstream says a CFA's X-API-KEY is unknown: the status of that answer (403 if
  // left out) and words of its text, as recorded in fixtures/get-dossiers/refused-key.json. Such an
  // answer holds the key refused at once; any other 403 refuses only that request (P13).
  keyRefusal: { status: 403, body: /clé API (refusée|inconnue)/ },
  // A route left out answers 501 NOT_SUPPORTED. TODO: the upstream's paths and quirks.
  routes: {
    'GET /status': { upstream: '/v1/status' },
    'GET /dossiers': { upstream: '/v2/dossiers', cacheTtlS: 600, response: [correctStates()] },
    'GET /dossiers/etats': { upstream: '/v2/dossiers/etats', cacheTtlS: 300, response: [correctStates(), wrapBareArray('EtatDossierResult')] },
    'GET /dossiers/liste': { upstream: '/v1/dossiers/liste', cacheTtlS: 600, response: [correctStates()] },
    'POST /dossiers': { upstream: '/v1/dossiers', request: [dateFormat(DOSSIER_DATES), dropNulls()], response: [correctStates()] },
    'POST /documents': { upstream: '/v1/documents', multipart: 'infosFichier' },
  },
});

const adapter: AdapterModule = { profile };
export default adapter;
`;
}

export const CONFORMANCE_TEST = `// The adapter kit over this profile and the upstream answers recorded in fixtures/.
import t from 'tap';
import { conformance } from '@opco-proxy/adapter-kit';
import { profile } from '../src/index.js';

await conformance(t, { profile, fixturesDir: new URL('../../fixtures/', import.meta.url) });
`;

export function readme(names: StarterNames): string {
  return `# ${names.packageName}

The opco-proxy adapter of ${names.id}: its upstream profile (\`src/index.ts\`), the upstream's
answers as recorded (\`fixtures/\`) and the conformance suite of \`@opco-proxy/adapter-kit\` over
both (\`npm test\`).

- \`fixtures/<route>/<name>.json\`: \`{"status", "body", "expect"?}\`, one answer of the upstream
  each, error answers with the service answer they must become (\`expect: {status, code}\`);
  \`fixtures/auth/token.json\`: the token endpoint's answer.
- \`fixtures/<route>/upstream-request.schema.json\`: what the upstream accepts for that route.

An operator names the package in the service's config: \`"opcos": {"${names.id}": {"adapter":
"${names.packageName}", "baseUrl": ..., "tokenUrl": ..., "clientId": ..., "clientSecretEnv": ...}}\`.
See ${ADAPTERS_GUIDE}.
`;
}

const dossier = {
  status: 'success',
  engagement: 11610,
  etat: 'RUTPURE',
  numeroInterne: 'DOS-2024-000004',
  numeroExterne: 'EXT-2024-000004',
  numeroDeca: '02120241100004',
  dateModification: '2025-01-13',
  cerfa: {
    employeur: { siret: '81654444933150', denomination: 'EURL Pâtisserie Fournier' },
    apprenti: { nom: 'MASSON', prenom: 'Camille', dateNaissance: '2005-07-17' },
    contrat: { dateDebutContrat: '2024-11-25', dateFinContrat: '2026-11-24' },
    formation: { rncp: 'RNCP35316', intituleQualification: 'CAP Cuisine' },
    organismeFormation: { siret: '44680792771583' },
  },
  echeances: [{ numeroEcheance: 1, dateDebutEcheance: '2024-11-25', dateFinEcheance: '2025-05-25', montant: 2845 }],
  detailsFacturation: { niveauPriseEnCharge: 5690, montantEngage: 11610, frequenceFacturation: 'SEMESTRIELLE' },
  engagementsFraisAnnexe: [],
};
const items = [
  { numeroExterne: 'EXT-2024-000001', numeroDeca: '03120240900001', numeroInterne: 'DOS-2024-000001', etat: 'SOLDE' },
  {
    numeroExterne: 'EXT-2024-000002',
    numeroDeca: '03320240900002',
    numeroInterne: 'DOS-2024-000002',
    etat: 'En cours',
  },
  { numeroExterne: 'EXT-2024-000003', numeroDeca: '03720240900003', numeroInterne: 'DOS-2024-000003', etat: 'Valide' },
];

const ISO = '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$';
const schema = (description: string, body: Record<string, unknown>) => ({
  $schema: 'http://json-schema.org/draft-07/schema#',
  description,
  ...body,
});
const text = { type: 'string', minLength: 1 };

/** Path (relative to fixtures/) -> content. */
export const FIXTURES: Readonly<Record<string, unknown>> = {
  'auth/token.json': {
    description: "TODO: the token endpoint's answer, as captured",
    status: 200,
    body: { access_token: 'recorded-token', token_type: 'Bearer', expires_in: 3600 },
  },
  'get-status/up.json': { description: 'GET /v1/status', status: 200, body: { status: 'UP', versions: ['v1'] } },
  'get-dossiers/by-numero-interne.json': {
    description: 'a dossier; its state written with a typo',
    status: 200,
    body: dossier,
  },
  'get-dossiers/refused-key.json': {
    description: "TODO: the upstream's answer to a CFA key it does not know, as captured",
    status: 403,
    body: { status: 'error', message: 'clé API refusée' },
    expect: { status: 403, code: 'HTTP_ERROR' },
  },
  'get-dossiers/unknown-dossier.json': {
    description: 'no such dossier',
    status: 404,
    body: { status: 'error', message: 'Dossier introuvable' },
    expect: { status: 404, code: 'NOT_FOUND' },
  },
  'get-dossiers/upstream-request.schema.json': schema(
    'GET /v2/dossiers: numeroInterne, or numeroExterne with numeroDeca.',
    {
      type: 'object',
      additionalProperties: false,
      properties: { numeroInterne: text, numeroExterne: text, numeroDeca: text },
      oneOf: [{ required: ['numeroInterne'] }, { required: ['numeroExterne', 'numeroDeca'] }],
    },
  ),
  'get-dossiers-etats/page-1.json': {
    description: 'first page',
    status: 200,
    body: { status: 'success', total: 3, count: 3, page: 1, EtatDossierResult: items },
  },
  'get-dossiers-etats/bare-array.json': { description: 'no numeroPage: a bare array', status: 200, body: items },
  'get-dossiers-etats/upstream-request.schema.json': schema('GET /v2/dossiers/etats.', {
    type: 'object',
    additionalProperties: false,
    properties: {
      anneeDossier: { type: 'string', pattern: '^[0-9]{4}$' },
      dateModification: { type: 'string', pattern: ISO },
      numeroPage: { type: 'string', pattern: '^[0-9]+$' },
    },
  }),
  'get-dossiers-liste/two-numbers.json': {
    description: 'a dossier and an unknown number',
    status: 200,
    body: { status: 'success', dossiers: [dossier], numerosInternesIntrouvables: ['DOS-1999-999999'] },
  },
  'get-dossiers-liste/upstream-request.schema.json': schema(
    'GET /v1/dossiers/liste: at most 50 comma-separated numbers.',
    {
      type: 'object',
      additionalProperties: false,
      required: ['numerosInternes'],
      properties: { numerosInternes: { type: 'string', pattern: '^[^,]+(,[^,]+){0,49}$' } },
    },
  ),
  'post-dossiers/created.json': {
    description: 'a dossier created',
    status: 201,
    body: { status: 'success', numeroInterne: 'DOS-NEW-000001', numeroExterne: 'CFA-1', comment: null },
  },
  'post-dossiers/upstream-request.schema.json': schema(
    'POST /v1/dossiers: the CERFA, dates YYYY-MM-DD, no null field.',
    {
      type: 'object',
      required: ['cerfa'],
      properties: {
        cerfa: {
          type: 'object',
          required: ['apprenti', 'contrat'],
          properties: {
            apprenti: {
              type: 'object',
              properties: { dateNaissance: { type: 'string', pattern: ISO }, nomUsage: { type: 'string' } },
            },
            contrat: {
              type: 'object',
              properties: {
                dateDebutContrat: { type: 'string', pattern: ISO },
                dateFinContrat: { type: 'string', pattern: ISO },
              },
            },
          },
        },
      },
    },
  ),
  'post-documents/created.json': {
    description: 'a document received',
    status: 201,
    body: { status: 'success', idDocument: 'DOC-NEW-000001', comment: null },
  },
  'post-documents/upstream-request.schema.json': schema('POST /v1/documents, part infosFichier.', {
    type: 'object',
    required: ['typeFichier', 'objets'],
    properties: { objets: { type: 'array', minItems: 1 } },
  }),
};
