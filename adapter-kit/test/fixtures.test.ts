// How the kit reads a fixtures folder, and what it says about one it cannot use.
import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFixtures, routeDir, type Finding } from '../src/index.js';

function folder(files: Record<string, unknown>): string {
  const root = mkdtempSync(join(tmpdir(), 'kit-fixtures-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return root;
}

t.test('folders are named after routes', async (t) => {
  t.equal(routeDir('GET /dossiers/etats'), 'get-dossiers-etats');
  t.equal(routeDir('POST /factures'), 'post-factures');
  t.equal(routeDir('GET /status'), 'get-status');
});

t.test('answers, error answers, the token answer and the request schema are read', async (t) => {
  const findings: Finding[] = [];
  const set = readFixtures(
    folder({
      'auth/token.json': { status: 200, body: { access_token: 'x' } },
      'get-dossiers/found.json': { status: 200, body: { status: 'success' }, headers: { 'x-trace': '1' } },
      'get-dossiers/missing.json': { status: 404, text: 'not found', expect: { status: 404, code: 'NOT_FOUND' } },
      'get-dossiers/upstream-request.schema.json': { type: 'object' },
      'get-dossiers/notes.txt': 'ignored',
    }),
    findings,
  );
  t.same(findings, []);
  t.equal(set.token?.text, '{"access_token":"x"}');
  const dossiers = set.routes.get('GET /dossiers')!;
  t.same(
    dossiers.answers.map((a) => [a.file, a.status, a.text]),
    [
      ['fixtures/get-dossiers/found.json', 200, '{"status":"success"}'],
      ['fixtures/get-dossiers/missing.json', 404, 'not found'],
    ],
  );
  t.same(dossiers.answers[0].headers, { 'x-trace': '1' });
  t.same(dossiers.requestSchema, {
    file: 'fixtures/get-dossiers/upstream-request.schema.json',
    schema: { type: 'object' },
  });
});

t.test('what cannot be used is said, with the file and what to write', async (t) => {
  const findings: Finding[] = [];
  readFixtures(
    folder({
      'get-dosiers/a.json': { status: 200, body: {} },
      'get-dossiers/no-status.json': { body: {} },
      'get-dossiers/no-body.json': { status: 200 },
      'get-dossiers/no-expect.json': { status: 400, body: { erreur: 'x' } },
      'get-dossiers/broken.json': '{"status": 200,',
    }),
    findings,
  );
  const said = findings.map((f) => `${f.where}: ${f.message}`);
  t.match(said, [
    /^fixtures\/get-dosiers: "get-dosiers" names no route; folders are named after routes: get-status, get-cfakeyinfo, get-dossiers,/,
    /^fixtures\/get-dossiers\/broken\.json: not JSON/,
    /^fixtures\/get-dossiers\/no-body\.json: give the answer as "body" \(JSON\) or "text"/,
    /^fixtures\/get-dossiers\/no-expect\.json: an error answer needs "expect": \{status, code\}, what the service must answer its client for it \(SPEC 7\)/,
    /^fixtures\/get-dossiers\/no-status\.json: "status" must be the HTTP status the upstream answered/,
  ]);
  const none: Finding[] = [];
  readFixtures(join(tmpdir(), 'no-such-fixtures-folder'), none);
  t.match(none, [{ area: 'fixtures', message: /no fixtures folder/ }]);
});
