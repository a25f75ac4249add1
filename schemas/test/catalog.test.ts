/** json/ holds one draft-07 schema per id of `schemaIds`, each named by its `$id`. */
import t from 'tap';
import { readdirSync } from 'node:fs';
import { allSchemaIds, loadSchema, schemaUri, validate, type SchemaTypes } from '../src/index.js';

const jsonDir = new URL('../../json/', import.meta.url);

t.test('schemaIds lists exactly the files of json/ (but the assembled config schema)', async (t) => {
  // config.schema.json is the kernel's schema with the shipped plugins' sections, written by
  // server/scripts/config-assembly.mjs for editors: not a schema of this package.
  const files = readdirSync(jsonDir)
    .filter((f) => f.endsWith('.schema.json') && f !== 'config.schema.json')
    .map((f) => f.slice(0, -'.schema.json'.length))
    .sort();
  t.same([...allSchemaIds].sort(), files);
});

t.test('every schema is draft-07 with its $id and a title, and compiles', async (t) => {
  for (const id of allSchemaIds) {
    const schema = loadSchema(id);
    t.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#', `${id} is draft-07`);
    t.equal(schema.$id, schemaUri(id), `${id} $id`);
    t.type(schema.title, 'string', `${id} has a title (its type name)`);
    t.doesNotThrow(() => validate(id, {}), `${id} compiles`);
  }
});

t.test('loadSchema hands out copies', async (t) => {
  const first = loadSchema('job');
  first.title = 'changed';
  t.equal(loadSchema('job').title, 'Job');
  t.throws(() => loadSchema('nope' as never), /unknown schema id/);
});

t.test('SchemaTypes maps every id to its generated type', async (t) => {
  // Compile-time check: a missing key here or in the generated file fails the build.
  const sample: Pick<SchemaTypes, 'sync-body' | 'async-accepted'> = {
    'sync-body': { opcoId: 'sandbox', minYear: 2018 },
    'async-accepted': {
      jobId: '7d0d3c2e-5f3b-4a8e-9d4c-1f2e3d4c5b6a',
      status: 'duplicate',
      statusUrl: '/sandbox/jobs/7d0d3c2e-5f3b-4a8e-9d4c-1f2e3d4c5b6a',
      warning: 'payload differs from the original request',
    },
  };
  t.same(validate('sync-body', sample['sync-body']), { valid: true });
  t.same(validate('async-accepted', sample['async-accepted']), { valid: true });
});
