// What the kit says of a profile before calling anything.
import t from 'tap';
import {
  apiKeyHeader,
  defineProfile,
  oauthClientCredentials,
  type AuthStrategy,
  type Profile,
  type ProfileDefinition,
} from '@opco-proxy/core';
import { profileProblems } from '@opco-proxy/core/application';
import { checkProfile } from '../src/profile-checks.js';
import { schemaDeclares } from '../src/service-schemas.js';

const sane = defineProfile({
  id: 'opco-acme',
  versions: ['v1'],
  rateLimit: { limit: 60, windowMs: 60_000 },
  sync: { batchSize: 50 },
  polling: { intervalMs: 300_000 },
  keyRefusal: { body: /clé API refusée/ },
  routes: {
    'GET /dossiers': { upstream: '/dossiers', cacheTtlS: 600 },
    'POST /factures': { upstream: '/factures', multipart: 'facture' },
  },
});

t.test('a sane profile, and the known strategies, pass', async (t) => {
  t.same(checkProfile(sane), []);
  t.same(checkProfile({ ...sane, auth: oauthClientCredentials({ request: 'json' }) }), []);
  t.same(checkProfile({ ...sane, auth: apiKeyHeader({ header: 'X-Gateway-Key' }) }), []);
});

t.test('limits, lifetimes, parts and rules an operator could not live with', async (t) => {
  const insane = {
    ...sane,
    id: 'Opco Acme',
    versions: [],
    rateLimit: { limit: 0, windowMs: 10 },
    sync: { batchSize: 200 },
    polling: { intervalMs: 1000 },
    errors: [{ status: 200, code: 'TIMEOUT', routes: ['GET /factures/etats'] }],
    routes: {
      'GET /dossiers': { upstream: 'dossiers', cacheTtlS: 604_800, multipart: 'x' },
      'POST /factures': { upstream: '/factures', cacheTtlS: 60 },
      'POST /dossiers': { upstream: '/dossiers', multipart: 'dossier' },
      'GET /nothing': { upstream: '/x' },
    },
  } as unknown as Profile;
  const said = checkProfile(insane).map((f) => f.where);
  t.same(
    said.sort(),
    [
      'errors[0].code',
      'errors[0].routes',
      'errors[0].status',
      'id',
      'polling.intervalMs',
      'rateLimit.limit',
      'rateLimit.windowMs',
      'routes["GET /dossiers"].cacheTtlS',
      'routes["GET /dossiers"].multipart',
      'routes["GET /dossiers"].upstream',
      'routes["GET /nothing"]',
      'routes["POST /dossiers"].multipart',
      'routes["POST /factures"].cacheTtlS',
      'routes["POST /factures"].multipart',
      'sync.batchSize',
      'versions',
    ].sort(),
  );
  t.match(checkProfile(insane).find((f) => f.where === 'sync.batchSize')?.message, /1 to 50 \(SPEC 8\)/);
});

t.test('blocks of the wrong type: the check the service runs at start, said once per key', async (t) => {
  const wrong = {
    ...sane,
    polling: 5,
    routes: [],
    errors: [{ status: 404, code: 'NOT_FOUND', body: 'inconnu' }],
  } as unknown as ProfileDefinition;
  const findings = checkProfile(wrong);
  t.same(
    findings.map((f) => f.where),
    ['polling', 'errors[0].body', 'routes'],
    'no second finding under a key already refused',
  );
  t.same(
    findings,
    profileProblems(wrong).map(({ key, problem }) => ({ area: 'profile', where: key, message: problem })),
    "core's words",
  );
  t.match(findings[2]?.message, /^an array: required, an object of route key/);
  const { sync: _s, polling: _p, ...bare } = sane;
  t.same(checkProfile(bare), [], 'sync and polling left out: their defaults are sane');
  t.same(
    checkProfile({ ...sane, formatVersion: 2 }).map((f) => `${f.where}: ${f.message}`),
    ['formatVersion: profile format 2 is not supported: this service supports profile format 1'],
  );
});

t.test('an authentication that reads keys the config file refuses', async (t) => {
  const custom: AuthStrategy = {
    kind: 'signed-jwt',
    configKeys: ['privateKeyEnv', 'tokenUrl'],
    setup: () => ({ headers: async () => ({}), refused: () => false }),
  };
  const [finding] = checkProfile({ ...sane, auth: custom });
  t.equal(finding?.where, 'auth');
  t.match(
    finding?.message,
    /reads opcos\.<id>\.privateKeyEnv, which the config file does not accept .*read custom settings from opcos\.<id>\.auth/,
  );
});

t.test('keyRefusal: declared, tested the same on every answer, never matching everything, not shadowed', async (t) => {
  const { keyRefusal: _k, ...undeclared } = sane;
  t.same(
    checkProfile(undeclared).map((f) => `${f.where}: ${f.message}`),
    [
      'keyRefusal: declare how the upstream says a CFA key is unknown, e.g. keyRefusal: {status: 403, body: /clé API refusée/}: without it, a key the upstream accepted ' +
        'is held refused only after 3 refused requests in a row, and each costs the CFA a refused request (P13)',
    ],
  );
  const said = (keyRefusal: unknown, errors?: unknown) =>
    checkProfile({ ...sane, keyRefusal, ...(errors ? { errors } : {}) } as ProfileDefinition).map(
      (f) => `${f.where}: ${f.message}`,
    );
  t.match(said({ body: /clé API refusée/g }), [
    /^keyRefusal\.body: \/clé API refusée\/g: the g and y flags make test\(\) start where the last match ended \(lastIndex\).*remove them$/,
  ]);
  t.match(said({ status: 400, body: /refusée/iy }), [/^keyRefusal\.body: \/refusée\/iy: the g and y flags/]);
  t.match(said({ body: /(clé refusée)?/ }), [
    /^keyRefusal\.body: \/\(clé refusée\)\?\/ matches an empty answer, so every 403 would be taken for an unknown key/,
  ]);
  t.match(said({ status: 400, body: /.*/ }), [/matches an empty answer, so every 400 would be taken/]);
  t.same(said({ status: 403, body: /Clé API (refusée|manquante)/ }), [], 'as classic-api declares it');
  t.same(
    said({ body: /clé/ }, [{ status: 403, body: /dossier/, code: 'NOT_FOUND' }]),
    [],
    'a rule with a body leaves the other 403s to keyRefusal',
  );
  t.same(said({ body: /clé/ }, [{ status: 403, routes: ['GET /dossiers'], code: 'NOT_FOUND' }]), [
    'errors[0]: takes every 403 answer of GET /dossiers before keyRefusal is tried (the error rules come first), so no key refusal is recognised there: give the rule a body',
  ]);
  t.same(
    said({ body: 'clé' }),
    ["keyRefusal.body: required, a regular expression tested against the upstream answer's text"],
    "a wrong type is core's word, said once",
  );
});

t.test('schema paths: declared fields only, through $ref, items and branches', async (t) => {
  t.ok(schemaDeclares('etats-page', ['EtatDossierResult', '*', 'etat']), 'through items and a $ref');
  t.ok(schemaDeclares('liste', ['dossiers', '0', 'cerfa', 'apprenti', 'dateNaissance']));
  t.ok(schemaDeclares('dossier-query', ['numeroDeca']));
  t.notOk(
    schemaDeclares('dossier', ['cerfa', 'apprenti', 'dateNaissanse']),
    'a misspelt field in an open object is not declared',
  );
  t.notOk(schemaDeclares('dossier', ['cerfa', 'maitre1', 'dateNaissance']), 'fields beyond SPEC 2.1 are not declared');
});
