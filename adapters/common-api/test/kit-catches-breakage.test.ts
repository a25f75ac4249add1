// The adapter kit fails on broken copies of common-api, and says where and what to change: a
// transform path that does not exist, a state left uncorrected, a recorded answer that misses a
// required field, a name left lower-case.
import t from 'tap';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkAdapter, describeFinding } from '@opco-proxy/adapter-kit';
import { correctStates, toString, type ProfileDefinition, type RouteKey, type RouteProfile } from '@opco-proxy/core';
import { profile } from '../src/index.js';

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
  const broken = withRoute('POST /dossiers', (route) => ({
    ...route,
    request: route.request!.map((x) =>
      x.name === 'toString'
        ? toString(['cerfa.contrat.dureeTravailHebdoHeure', 'cerfa.contrat.dureeTravailHebdoMinutes'])
        : x,
    ),
  }));
  t.same(await messages({ profile: broken }, 'transforms'), [
    'POST /dossiers request[3] toString: path "cerfa.contrat.dureeTravailHebdoHeure" matches no field of the kit\'s sample requests and is not a field of the service schema dossier-body; ' +
      "at this point of the list fields bear the service's names (schema dossier-body): fix the path, or declare the field",
  ]);
  const requests = await messages({ profile: broken }, 'requests');
  t.ok(
    requests.some((m) =>
      m.startsWith(
        'POST /dossiers (sample request "full CERFA"): the upstream request body does not satisfy fixtures/post-dossiers/upstream-request.schema.json, cerfa.contrat.dureeTravailHebdoHeures: must be string',
      ),
    ),
    requests.join('\n'),
  );
});

t.test('a state left uncorrected', async (t) => {
  const broken = withRoute('GET /dossiers/liste', (route) => ({
    ...route,
    response: [correctStates({ RUTPURE: 'RUPTURE', 'En cours': 'EN_COURS_INSTRUCTION', Refuse: 'REFUSE' })],
  }));
  const answers = await messages({ profile: broken }, 'answers');
  t.same(answers, [
    'fixtures/get-dossiers-liste/three-numbers.json: after the response transforms of GET /dossiers/liste, dossiers.1.etat is "Valide", not a state of SPEC 3.3 ' +
      '(TRANSMIS, EN_COURS_INSTRUCTION, ENGAGE, ANNULE, REFUSE, RUPTURE, SOLDE): map it in the response transforms (mapValues or correctStates)',
  ]);
});

t.test('a recorded answer whose transformed answer misses a required field', async (t) => {
  const copy = mkdtempSync(join(tmpdir(), 'common-fixtures-'));
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(fixturesDir, copy, { recursive: true });
  const file = join(copy, 'get-dossiers-liste', 'three-numbers.json');
  const fixture = JSON.parse(readFileSync(file, 'utf8'));
  delete fixture.body.dossiers[0].cerfa;
  writeFileSync(file, JSON.stringify(fixture));
  t.same(await messages({ profile, fixturesDir: copy }, 'answers'), [
    'fixtures/get-dossiers-liste/three-numbers.json: after the response transforms of GET /dossiers/liste, dossiers.0.cerfa: Required (service schema liste): add or fix a response transform for that field',
  ]);
});

t.test('an apprentice name sent as the CFA typed it', async (t) => {
  const broken = withRoute('POST /conventions', (route) => ({
    ...route,
    request: route.request!.filter((x) => x.name !== 'uppercase'),
  }));
  const requests = await messages({ profile: broken }, 'requests');
  t.ok(
    requests.some((m) =>
      /^POST \/conventions \(sample request "full convention"\): .*, apprenti\.prenom: must match pattern/.test(m),
    ),
    requests.join('\n'),
  );
});

t.test(
  'without sync and polling the defaults apply; a block of the wrong type is said as the service refuses it, not as an authentication failure',
  async (t) => {
    const { sync: _s, polling: _p, ...bare } = profile;
    t.same((await checkAdapter({ profile: bare, fixturesDir })).findings, [], 'the defaults pass');
    const report = await checkAdapter({ profile: { ...bare, polling: 5 } as never, fixturesDir });
    const profileArea = report.findings.filter((finding) => finding.area === 'profile').map(describeFinding);
    t.same(profileArea, ['polling: 5: an object {intervalMs}, or leave it out for the default (intervalMs 300000)']);
    t.notOk(
      report.findings.some((finding) => /authentication|token/.test(finding.message)),
      'no authentication finding',
    );
    t.ok(
      report.findings
        .filter((finding) => finding.area !== 'profile')
        .every((finding) => finding.message.startsWith('not checked: the service refuses this profile at start')),
    );
  },
);
