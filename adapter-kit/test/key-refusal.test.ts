// The kit replays the recorded answers of an unknown CFA key through the service's upstream client
// and checks that the profile's keyRefusal recognises them (the ServiceError's keyRefused), and
// that a 403 recorded as refusing one request (expect keyRefused: false) is not taken for one.
import t from 'tap';
import { cpSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ProfileDefinition } from '@opco-proxy/core';
import { withProfileDefaults } from '@opco-proxy/core/application';
import { checkAdapter, describeFinding, readFixtures, type Finding } from '../src/index.js';
import { startReplay } from '../src/replay.js';

const BUNDLED = ['common-api', 'classic-api'] as const;
type Bundled = (typeof BUNDLED)[number];

/** A bundled adapter's profile (built before the kit's tests run) and its recorded answers. */
async function bundled(name: Bundled): Promise<{ profile: ProfileDefinition; fixturesDir: string }> {
  const module = new URL(`../../../adapters/${name}/dist/src/index.js`, import.meta.url).href;
  const { profile } = (await import(module)) as { profile: ProfileDefinition };
  return { profile, fixturesDir: fileURLToPath(new URL(`../../../adapters/${name}/fixtures/`, import.meta.url)) };
}

/** What the kit says of key refusals, wherever it says it. */
const aboutKeys = (findings: Finding[]) =>
  findings
    .filter((f) => /keyRefus|unknown CFA key|CFA key is unknown/.test(`${f.where} ${f.message}`))
    .map(describeFinding);

function copyOf(fixturesDir: string, t: { teardown(fn: () => void): unknown }): string {
  const copy = mkdtempSync(join(tmpdir(), 'kit-key-refusal-'));
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));
  cpSync(fixturesDir, copy, { recursive: true });
  return copy;
}

t.test('the bundled profiles recognise their recorded refused keys', async (t) => {
  for (const name of BUNDLED) {
    const { profile, fixturesDir } = await bundled(name);
    const report = await checkAdapter({ profile, fixturesDir });
    t.same(aboutKeys(report.findings), [], `${name}: no keyRefusal finding`);
    t.match(report.checked.errors, /key refusals recognised by keyRefusal/);

    // What the kit's check rests on: the service's own upstream client flags the answer.
    const fixtures = readFixtures(fixturesDir, []);
    const refused = fixtures.routes
      .get('GET /dossiers')!
      .answers.find((f) => f.file === 'fixtures/get-dossiers/refused-key.json')!;
    const replay = await startReplay(withProfileDefaults(profile), fixtures.token);
    try {
      const outcome = await replay.call('GET /dossiers', { query: { numeroInterne: 'DOS-2024-000001' } }, refused);
      t.ok(
        !outcome.ok &&
          outcome.error.code === 'HTTP_ERROR' &&
          outcome.error.status === 403 &&
          outcome.error.keyRefused === true,
        `${name}: 403 HTTP_ERROR, keyRefused`,
      );
    } finally {
      await replay.close();
    }
  }
});

t.test('a keyRefusal that does not match the recorded refused key: the file, and what to fix', async (t) => {
  const { profile, fixturesDir } = await bundled('common-api');
  // classic-api's words, capitalised: common-api's upstream writes "clé API refusée".
  const misspelt = await checkAdapter({
    profile: { ...profile, keyRefusal: { status: 403, body: /Clé API (refusée|manquante)/ } },
    fixturesDir,
  });
  t.same(aboutKeys(misspelt.findings), [
    'fixtures/get-dossiers/refused-key.json: the service takes this 403 ({"status":"error","message":"clé API refusée"}) for a refused request, not for an unknown CFA key: ' +
      "keyRefusal.body /Clé API (refusée|manquante)/ does not match its text: fix it to match the upstream's words (case and accents as the upstream writes them); " +
      'or, if this answer refuses one request to a key the upstream knows, say so in the fixture: "expect": {"status": 403, "code": "HTTP_ERROR", "keyRefused": false}',
  ]);
  t.equal(misspelt.findings.find((f) => f.where === 'fixtures/get-dossiers/refused-key.json')?.area, 'errors');

  const otherStatus = await checkAdapter({
    profile: { ...profile, keyRefusal: { status: 400, body: /clé API refusée/ } },
    fixturesDir,
  });
  t.match(aboutKeys(otherStatus.findings), [
    /^fixtures\/get-dossiers\/refused-key\.json: .*keyRefusal\.status is 400, this answer's 403: fix keyRefusal\.status/,
  ]);
});

t.test('a profile without keyRefusal: said in the profile, and at the recorded refused key', async (t) => {
  const { profile, fixturesDir } = await bundled('classic-api');
  const { keyRefusal: _k, ...undeclared } = profile;
  const report = await checkAdapter({ profile: undeclared, fixturesDir });
  const said = aboutKeys(report.findings);
  t.equal(said.length, 2, said.join('\n'));
  t.match(said[0], /^keyRefusal: declare how the upstream says a CFA key is unknown/);
  t.match(
    said[1],
    /^fixtures\/get-dossiers\/refused-key\.json: the service takes this 403 \(\{"erreur":"Clé API refusée"\}\) for a refused request.*the profile declares no keyRefusal: declare one that matches it/,
  );
});

t.test('a 403 recorded as refusing one request must not be taken for an unknown key', async (t) => {
  const { profile, fixturesDir } = await bundled('common-api');
  const copy = copyOf(fixturesDir, t);
  writeFileSync(
    join(copy, 'get-dossiers', 'not-yours.json'),
    JSON.stringify({
      description: 'a dossier of another CFA',
      status: 403,
      body: { status: 'error', message: 'dossier non rattaché à ce CFA' },
      expect: { status: 403, code: 'HTTP_ERROR', keyRefused: false },
    }),
  );
  t.same(
    aboutKeys((await checkAdapter({ profile, fixturesDir: copy })).findings),
    [],
    'the profile tells the two 403s apart',
  );
  const tooWide = await checkAdapter({
    profile: { ...profile, keyRefusal: { body: /refusée|CFA/ } },
    fixturesDir: copy,
  });
  t.same(aboutKeys(tooWide.findings), [
    "fixtures/get-dossiers/not-yours.json: keyRefusal /refusée|CFA/ takes this 403 for an unknown CFA key, where the fixture's expect says keyRefused: false: the service would hold " +
      "a key the upstream knows refused at once for a request it merely refused (P13); narrow keyRefusal.body to the upstream's words for an unknown key",
  ]);
});

t.test('a declared keyRefusal needs a recorded refused key; keyRefused is a boolean of a 403 HTTP_ERROR', async (t) => {
  const { profile, fixturesDir } = await bundled('common-api');
  const copy = copyOf(fixturesDir, t);
  unlinkSync(join(copy, 'get-dossiers', 'refused-key.json'));
  t.same(aboutKeys((await checkAdapter({ profile, fixturesDir: copy })).findings), [
    "fixtures/get-dossiers: record the upstream's answer to an unknown CFA key, e.g. fixtures/get-dossiers/refused-key.json " +
      '({"status": 403, "body": ..., "expect": {"status": 403, "code": "HTTP_ERROR"}}): the kit checks that keyRefusal recognises it',
  ]);

  writeFileSync(
    join(copy, 'get-dossiers', 'a.json'),
    JSON.stringify({ status: 403, body: {}, expect: { status: 403, code: 'HTTP_ERROR', keyRefused: 'yes' } }),
  );
  writeFileSync(
    join(copy, 'get-dossiers', 'b.json'),
    JSON.stringify({ status: 404, body: {}, expect: { status: 404, code: 'NOT_FOUND', keyRefused: true } }),
  );
  writeFileSync(
    join(copy, 'get-dossiers', 'c.json'),
    JSON.stringify({ status: 401, body: {}, expect: { status: 403, code: 'HTTP_ERROR', keyRefused: true } }),
  );
  const findings: Finding[] = [];
  readFixtures(copy, findings);
  t.match(findings.map(describeFinding), [
    /^fixtures\/get-dossiers\/a\.json: "expect\.keyRefused" is true or false/,
    /^fixtures\/get-dossiers\/b\.json: an unknown CFA key is answered 403 HTTP_ERROR \(D8\)/,
    /^fixtures\/get-dossiers\/c\.json: an unknown CFA key is answered 403 HTTP_ERROR \(D8\), and never told by a 401/,
  ]);
});
