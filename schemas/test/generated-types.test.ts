/** The generated types are checked against the schemas: a stale or edited file must fail `check`. */
import t from 'tap';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, appendFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const script = fileURLToPath(new URL('../../scripts/generate-types.mjs', import.meta.url));
const committed = fileURLToPath(new URL('../../src/generated/types.ts', import.meta.url));

async function check(typesFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, '--check'], {
      env: { ...process.env, SCHEMAS_TYPES_FILE: typesFile },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

t.test('the committed file is what the schemas produce', async (t) => {
  const result = await check(committed);
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /up to date/);
});

t.test('an edited copy is reported stale', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'schemas-types-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const copy = join(dir, 'types.ts');
  copyFileSync(committed, copy);
  t.equal((await check(copy)).code, 0, 'an exact copy passes');
  appendFileSync(copy, '\nexport type HandEdited = true;\n');
  const result = await check(copy);
  t.equal(result.code, 1);
  t.match(result.stderr, /is stale/);
  t.match(result.stderr, /npm run generate/);
});

t.test('a missing file is reported stale', async (t) => {
  const result = await check(join(tmpdir(), 'schemas-types-missing', 'types.ts'));
  t.equal(result.code, 1);
  t.match(result.stderr, /is stale/);
});
