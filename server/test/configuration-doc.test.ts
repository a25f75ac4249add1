// docs/configuration.md and the config schema cannot drift apart: every key of the schema start-up
// validates with (the kernel's with the shipped plugins' and drivers' sections, CONFIG_PARTS) and
// every named environment variable is documented; the `$schema` line of deploy/config.json names
// schemas/json/config.schema.json, which is that same schema, and the example passes the check.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERIC_ENV_PREFIX, NAMED_ENV_VARIABLES, checkConfig, configSchema } from '@opco-proxy/core/application';
import { CONFIG_PARTS } from '../src/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const doc = readFileSync(resolve(root, 'docs/configuration.md'), 'utf8');

type Node = { properties?: Record<string, Node>; additionalProperties?: Node | boolean };

/** Leaf key paths: `jobs.leaseMs`, `opcos.<id>.rateLimit.limit`, `opcos.<id>.cacheTtlS`. */
function keyPaths(node: Node, path: string[] = []): string[] {
  if (node.properties)
    return Object.entries(node.properties).flatMap(([key, child]) => keyPaths(child, [...path, key]));
  if (typeof node.additionalProperties === 'object' && node.additionalProperties.properties)
    return keyPaths(node.additionalProperties, [...path, '<id>']);
  return [path.join('.')];
}

t.test('every key of the config schema is in docs/configuration.md', async (t) => {
  const paths = keyPaths(configSchema(CONFIG_PARTS));
  t.ok(paths.length > 50, `${paths.length} keys`);
  for (const path of paths) t.ok(doc.includes(`\`${path}\``), `${path} documented`);
});

t.test('every named environment variable and the generic rule are documented', async (t) => {
  for (const variable of NAMED_ENV_VARIABLES) t.ok(doc.includes(`\`${variable.name}\``), variable.name);
  t.ok(doc.includes(GENERIC_ENV_PREFIX), GENERIC_ENV_PREFIX);
  t.match(doc, /defaults < config file < environment < command-line flags/);
});

t.test('deploy/config.json names the validated schema for editors and passes the check', async (t) => {
  const file = resolve(root, 'deploy/config.json');
  const example = JSON.parse(readFileSync(file, 'utf8')) as { $schema: string };
  const editorSchema = JSON.parse(readFileSync(resolve(dirname(file), example.$schema), 'utf8')) as unknown;
  const { $id: _id, title: _title, ...validated } = configSchema(CONFIG_PARTS);
  const { $id: _editorId, title: _editorTitle, ...edited } = editorSchema as Record<string, unknown>;
  t.same(edited, validated, 'the editor reads the schema start-up validates with');
  t.same(checkConfig(example, {}, {}, CONFIG_PARTS).errors, []);
});
