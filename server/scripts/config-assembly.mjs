#!/usr/bin/env node
/**
 * Each plugin and driver owns its configuration section (issue 29). From their schemas this
 * writes, and with --check verifies (run by `npm test`'s pretest):
 *   1. <package>/src/generated/config.ts for every workspace package with a config.schema.json:
 *      the section's TypeScript type (a key with a default is always present once defaults are
 *      applied, so it is not optional) and the schema itself as CONFIG_SCHEMA;
 *   2. schemas/json/config.schema.json: the kernel's schema with the sections and drivers this
 *      application ships (server/src/config-parts.ts, read from its build), for editors;
 *   3. the key table of docs/configuration.md, between its `config-keys` markers.
 *
 *   node server/scripts/config-assembly.mjs [--check]
 * Step 1 needs no build; steps 2 and 3 read server/dist (run after `npm run build`).
 */
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const root = fileURLToPath(new URL('../../', import.meta.url));
const check = process.argv.includes('--check');
const typesOnly = process.argv.includes('--types-only');
const stale = [];

function write(file, text) {
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === text) return;
  if (check) stale.push(relative(root, file));
  else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${relative(root, file)}`);
  }
}

function sectionPackages() {
  const found = [];
  for (const group of ['plugins', 'drivers']) {
    for (const name of readdirSync(join(root, group))) {
      const file = join(root, group, name, 'config.schema.json');
      if (existsSync(file)) found.push({ dir: join(root, group, name), file });
    }
  }
  return found;
}

/** Keys with a default are filled in before a plugin sees its section: required in its type. */
function asFilled(schema) {
  if (typeof schema !== 'object' || schema === null || !schema.properties) return schema;
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([key, child]) => [key, asFilled(child)]),
  );
  const defaulted = Object.entries(schema.properties)
    .filter(([, child]) => child.default !== undefined)
    .map(([key]) => key);
  const required = [...new Set([...(schema.required ?? []), ...defaulted])];
  return { ...schema, properties, ...(required.length > 0 ? { required } : {}) };
}

async function sectionTypes() {
  for (const { dir, file } of sectionPackages()) {
    const schema = JSON.parse(readFileSync(file, 'utf8'));
    const { $schema: _draft, $id: _id, ...typed } = asFilled(schema);
    const body = await compile(typed, schema.title, {
      bannerComment: '',
      additionalProperties: false,
      format: true,
      unknownAny: true,
    });
    const text = `/**\n * generated — do not edit. Source: ${relative(root, file)}; regenerate with\n * \`npm run generate -w @opco-proxy/server\`.\n */\n${body}\n/** The section's JSON Schema, defaults included (what the application assembles the config schema from). */\nexport const CONFIG_SCHEMA: { [keyword: string]: unknown } = ${JSON.stringify(schema, null, 2)};\n`;
    write(join(dir, 'src/generated/config.ts'), text);
  }
}

async function assembly() {
  const server = join(root, 'server/dist/src/config-parts.js');
  if (!existsSync(server)) throw new Error('server/dist is missing: run npm run build first');
  const { CONFIG_PARTS } = await import(pathToFileURL(server).href);
  const { configSchema } = await import(pathToFileURL(join(root, 'core/dist/src/config/config.js')).href);
  const schema = configSchema(CONFIG_PARTS);
  const editorSchema = {
    ...schema,
    $id: schema.$id.replace('kernel-config.schema.json', 'config.schema.json'),
    title: 'ConfigFile',
  };
  write(join(root, 'schemas/json/config.schema.json'), `${JSON.stringify(editorSchema, null, 2)}\n`);
  write(
    join(root, 'docs/configuration.md'),
    withKeyTable(readFileSync(join(root, 'docs/configuration.md'), 'utf8'), schema),
  );
}

const BEGIN = '<!-- config-keys: generated from the schemas by server/scripts/config-assembly.mjs -->';
const END = '<!-- /config-keys -->';

function withKeyTable(doc, schema) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/configuration.md lacks the ${BEGIN} ... ${END} markers`);
  const rows = keyRows(schema).map(([key, value, what]) => `| \`${key}\` | ${value} | ${what} |`);
  const table = ['| key | default | what |', '|---|---|---|', ...rows].join('\n');
  return `${doc.slice(0, start)}${BEGIN}\n${table}\n${doc.slice(end)}`;
}

/** One row per leaf key: `jobs.leaseMs`, `opcos.<id>.baseUrl`. */
function keyRows(node, path = [], inherited = undefined) {
  if (node.properties)
    return Object.entries(node.properties).flatMap(([key, child]) =>
      keyRows(child, [...path, key], (node.default ?? inherited)?.[key]),
    );
  if (typeof node.additionalProperties === 'object' && node.additionalProperties.properties)
    return keyRows(node.additionalProperties, [...path, '<id>']);
  const fallback = node.default ?? inherited;
  const value = fallback === undefined ? '' : `\`${JSON.stringify(fallback)}\``;
  return [[path.join('.'), value, (node.description ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')]];
}

await sectionTypes();
if (!typesOnly) await assembly();
if (stale.length > 0) {
  console.error(`generated files out of date (run npm run generate -w @opco-proxy/server):\n  ${stale.join('\n  ')}`);
  process.exit(1);
}
