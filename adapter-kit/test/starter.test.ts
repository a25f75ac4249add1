// The starter writes a package that passes `npm test` as written (its conformance suite over its
// own skeleton and fixtures), refuses to overwrite, and names things as npm and the config expect.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createAdapterPackage, starterNames } from '../src/index.js';

const run = promisify(execFile);
// Inside the repository (under dist/, ignored), so @opco-proxy/core, the kit, tsc and tap resolve
// from the repository's node_modules as they do for a package in adapters/.
const scratch = fileURLToPath(new URL('../starter-check/', import.meta.url));
mkdirSync(scratch, { recursive: true });
const bin = fileURLToPath(new URL('../../bin/opco-proxy-adapter.js', import.meta.url));

t.test('a new package passes npm test at once', async (t) => {
  const dir = join(mkdtempSync(join(scratch, 'new-')), 'acme');
  const files = createAdapterPackage('@acme/opco-proxy-adapter-acme', dir);
  t.ok(
    files.includes('src/index.ts') &&
      files.includes('test/conformance.test.ts') &&
      files.includes('fixtures/auth/token.json'),
  );
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  t.equal(pkg.name, '@acme/opco-proxy-adapter-acme');
  t.same(pkg.peerDependencies, { '@opco-proxy/core': '^0.1.0' }, 'core comes from the service that loads it');
  for (const bundled of ['common-api', 'classic-api', 'sandbox']) {
    const declared = JSON.parse(
      readFileSync(new URL(`../../../adapters/${bundled}/package.json`, import.meta.url), 'utf8'),
    );
    t.same(declared.peerDependencies, pkg.peerDependencies, `the same range as the bundled ${bundled}`);
  }
  t.match(
    readFileSync(join(dir, 'src/index.ts'), 'utf8'),
    /formatVersion: 1,/,
    'the profile says the format it is written for',
  );
  t.match(readFileSync(join(dir, 'src/index.ts'), 'utf8'), /id: 'acme'/);
  t.match(
    readFileSync(join(dir, 'src/index.ts'), 'utf8'),
    /keyRefusal: \{ status: 403, body: \/clé API \(refusée\|inconnue\)\/ \}/,
    'it says how the upstream tells an unknown key',
  );
  t.ok(
    files.includes('fixtures/get-dossiers/refused-key.json'),
    'and records that answer, for the kit to check keyRefusal against',
  );
  const { stdout } = await run('npm', ['test'], { cwd: dir, timeout: 120_000 });
  t.match(stdout, /^ok 1 - dist\/test\/conformance\.test\.js/m, 'the conformance test passes');
  t.equal(stdout.match(/^ {4}ok \d+ - conformance: /gm)?.length, 7, 'in its seven areas');
});

t.test('the suite of a new package fails once its profile is wrong', async (t) => {
  const dir = join(mkdtempSync(join(scratch, 'broken-')), 'acme');
  createAdapterPackage('opco-acme', dir);
  const source = join(dir, 'src/index.ts');
  writeFileSync(
    source,
    readFileSync(source, 'utf8').replace("'cerfa.apprenti.dateNaissance'", "'cerfa.apprenti.dateNaisance'"),
  );
  const failed = await run('npm', ['test'], { cwd: dir, timeout: 120_000 }).then(
    () => undefined,
    (err: { stdout: string }) => err.stdout,
  );
  t.ok(failed, 'npm test fails');
  t.match(failed, /POST \/dossiers request\[0\] dateFormat: path "cerfa\.apprenti\.dateNaisance" matches no field/);
});

t.test('names: the package name as given, the profile id without the adapter prefix', async (t) => {
  t.same(starterNames('@acme/opco-proxy-adapter-opco-x'), {
    packageName: '@acme/opco-proxy-adapter-opco-x',
    id: 'opco-x',
  });
  t.same(starterNames('adapter-akto'), { packageName: 'adapter-akto', id: 'akto' });
  t.same(starterNames('opco.ep'), { packageName: 'opco.ep', id: 'opco-ep' });
  for (const bad of ['Acme', 'a b', '@scope', '../x', ''])
    t.throws(() => starterNames(bad), /not an npm package name/, JSON.stringify(bad));
});

t.test('it never writes over an existing folder', async (t) => {
  const dir = mkdtempSync(join(scratch, 'taken-'));
  writeFileSync(join(dir, 'keep.txt'), 'mine');
  t.throws(() => createAdapterPackage('opco-acme', dir), /not empty/);
  t.equal(readFileSync(join(dir, 'keep.txt'), 'utf8'), 'mine');
});

t.test('the command: new NAME [--dir DIR], usage otherwise', async (t) => {
  const cwd = mkdtempSync(join(scratch, 'cli-'));
  const { stdout } = await run(process.execPath, [bin, 'new', 'opco-acme'], { cwd });
  t.match(stdout, /wrote 21 files to opco-acme/);
  t.match(stdout, /npm test/);
  const wrong = await run(process.execPath, [bin, 'make', 'x'], { cwd }).then(
    () => undefined,
    (err: { stderr: string; code: number }) => err,
  );
  t.equal(wrong?.code, 1);
  t.match(wrong?.stderr, /usage: opco-proxy-adapter new NAME/);
});
