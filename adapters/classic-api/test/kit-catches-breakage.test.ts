// The adapter kit fails on broken copies of classic-api, and says where and what to change: a
// transform path that does not exist, a state left unmapped, a recorded answer that misses a
// required field, a lost error rule, a token field misnamed, a request left in camelCase.
import t from 'tap';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkAdapter, describeFinding } from '@opco-proxy/adapter-kit';
import {
  dateFormat,
  mapValues,
  oauthClientCredentials,
  type ProfileDefinition,
  type RouteKey,
  type RouteProfile,
} from '@opco-proxy/core';
import { profile } from '../src/index.js';
import { DOSSIER_RECORD_DATES, DOSSIER_STATES } from '../src/vocabulary.js';

const fixturesDir = fileURLToPath(new URL('../../fixtures/', import.meta.url));

function withRoute(route: RouteKey, change: (routeProfile: RouteProfile) => RouteProfile): ProfileDefinition {
  return { ...profile, routes: { ...profile.routes, [route]: change(profile.routes[route]!) } };
}

async function messages(
  options: { profile: ProfileDefinition; fixturesDir?: string },
  area: string,
): Promise<string[]> {
  const report = await checkAdapter({ fixturesDir, ...options });
  return report.findings.filter((finding) => finding.area === area).map(describeFinding);
}

t.test('the adapter as it is passes', async (t) => {
  t.same((await checkAdapter({ profile, fixturesDir })).findings, []);
});

t.test('a transform path that does not exist', async (t) => {
  const misspelt = DOSSIER_RECORD_DATES.map((path) => path.replace('apprenti.dateNaissance', 'apprenti.dateNaissanse'));
  const broken = withRoute('GET /dossiers', (route) => ({
    ...route,
    response: route.response!.map((x) => (x.name === 'dateFormat' ? dateFormat(misspelt) : x)),
  }));
  const paths = await messages({ profile: broken }, 'transforms');
  t.equal(paths.length, 1, paths.join('\n'));
  t.match(
    paths[0],
    /^GET \/dossiers response\[2\] dateFormat: path "cerfa\.apprenti\.dateNaissanse" matches no field of any recorded answer \(fixtures\/get-dossiers\)/,
  );
  t.match(paths[0], /fix the path/);
  const answers = await messages({ profile: broken }, 'answers');
  t.ok(
    answers.some((m) =>
      /^fixtures\/get-dossiers\/by-numero-interne\.json: .*cerfa\.apprenti\.dateNaissance is "\d\d\/\d\d\/\d{4}", a date written DD\/MM\/YYYY/.test(
        m,
      ),
    ),
    answers.join('\n'),
  );
  t.ok(
    answers.some((m) => /add dateFormat\(\['cerfa\.apprenti\.dateNaissance'\]\)/.test(m)),
    'says what to add',
  );
});

t.test('a state left unmapped', async (t) => {
  const { ACCEPTE: _, ...partial } = DOSSIER_STATES;
  const broken = withRoute('GET /dossiers/etats', (route) => ({
    ...route,
    response: route.response!.map((x) =>
      x.name === 'mapValues' ? mapValues(['EtatDossierResult.*.etat'], partial) : x,
    ),
  }));
  const answers = await messages({ profile: broken }, 'answers');
  t.ok(answers.length > 0);
  t.ok(
    answers.every((m) =>
      /^fixtures\/get-dossiers-etats\/[a-z0-9-]+\.json: after the response transforms of GET \/dossiers\/etats, EtatDossierResult\.\d+\.etat is "ACCEPTE", not a state of SPEC 3\.3/.test(
        m,
      ),
    ),
    answers.join('\n'),
  );
  t.match(answers[0], /map it in the response transforms \(mapValues or correctStates\)/);
});

t.test('a recorded answer whose transformed answer misses a required field', async (t) => {
  const copy = mkdtempSync(join(tmpdir(), 'classic-fixtures-'));
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(fixturesDir, copy, { recursive: true });
  const file = join(copy, 'get-dossiers-etats', 'page-0.json');
  const fixture = JSON.parse(readFileSync(file, 'utf8'));
  delete fixture.body.items[3].numero_interne;
  writeFileSync(file, JSON.stringify(fixture));
  const answers = await messages({ profile, fixturesDir: copy }, 'answers');
  t.same(answers, [
    'fixtures/get-dossiers-etats/page-0.json: after the response transforms of GET /dossiers/etats, EtatDossierResult.3.numeroInterne: Required (service schema etats-page): add or fix a response transform for that field',
  ]);
  const record = join(copy, 'get-dossiers', 'by-numero-interne.json');
  const dossier = JSON.parse(readFileSync(record, 'utf8'));
  delete dossier.body.cerfa;
  writeFileSync(record, JSON.stringify(dossier));
  const unusable = await messages({ profile, fixturesDir: copy }, 'answers');
  t.ok(
    unusable.some(
      (m) =>
        m.startsWith(
          'fixtures/get-dossiers/by-numero-interne.json: the pipeline refused this answer (UPSTREAM_INVALID_RESPONSE',
        ) && m.includes('cerfa: missing'),
    ),
    unusable.join('\n'),
  );
});

t.test('the 400 "Dossier inconnu" rule lost', async (t) => {
  const broken = { ...profile, errors: profile.errors!.filter((rule) => rule.code !== 'NOT_FOUND') };
  t.same(await messages({ profile: broken }, 'errors'), [
    'fixtures/get-dossiers/unknown-dossier.json: the upstream\'s 400 becomes 400 UPSTREAM_ERROR ("upstream answered 400"), the fixture expects 404 NOT_FOUND: ' +
      "add an errors rule to the profile, e.g. {status: 400, body: /<words of this answer>/, routes: ['GET /dossiers'], code: 'NOT_FOUND'}",
  ]);
});

t.test('the token answer read under the wrong field names', async (t) => {
  const broken = { ...profile, auth: oauthClientCredentials({ request: 'basic' }) };
  const auth = await messages({ profile: broken }, 'auth');
  t.equal(auth.length, 1);
  t.match(
    auth[0],
    /^fixtures\/auth\/token\.json: no token from the recorded answer .*its fields are token, validity_seconds: set tokenField and expiresInField/,
  );
  t.match(
    await messages({ profile: broken }, 'answers'),
    [/^auth: not checked: every call needs the authentication to work first/],
    'nothing passes unchecked',
  );
});

t.test("an upload sent with the service's names", async (t) => {
  const broken = withRoute('POST /factures', (route) => ({
    ...route,
    request: route.request!.filter((x) => x.name !== 'renameKeys'),
  }));
  const requests = await messages({ profile: broken }, 'requests');
  t.ok(requests.length > 0);
  t.ok(
    requests.includes(
      'POST /factures (sample request "invoice of two lines"): the upstream request body does not satisfy fixtures/post-factures/upstream-request.schema.json, ' +
        'montantTotal: a name the upstream does not accept (must match pattern "^_?[a-z0-9]+(_[a-z0-9]+)*$"): add or fix a request transform (or the schema, if the upstream accepts it)',
    ),
    requests.join('\n'),
  );
  t.ok(
    requests.some((m) => m.includes('montant_total: missing')),
    'and the field it misses',
  );
});
