#!/usr/bin/env node
/**
 * Writes src/generated/types.ts from json/*.schema.json, so the TypeScript types can never
 * drift from the schemas that validate requests and describe the API.
 *
 *   node scripts/generate-types.mjs           write the file
 *   node scripts/generate-types.mjs --check   exit 1 when the file on disk is not what the
 *                                             schemas produce (run by `npm test` via lerna)
 *
 * SCHEMAS_TYPES_FILE overrides the output path, so a test can prove --check fails on a
 * modified copy without touching the real file.
 */
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const jsonDir = new URL('../json/', import.meta.url);
const outFile = process.env.SCHEMAS_TYPES_FILE ?? fileURLToPath(new URL('../src/generated/types.ts', import.meta.url));
const check = process.argv.includes('--check');

const BANNER = `/* eslint-disable */
/**
 * generated — do not edit.
 * Source: schemas/json/*.schema.json. Regenerate with \`npm run generate -w @opco-proxy/schemas\`.
 */`;

const SUFFIX = '.schema.json';

function loadSchemas() {
  // config.schema.json is the kernel's schema assembled with the plugins' sections
  // (server/scripts/config-assembly.mjs): each package types its own part.
  const files = readdirSync(jsonDir)
    .filter((f) => f.endsWith(SUFFIX) && f !== 'config.schema.json')
    .sort();
  return files.map((file) => ({
    id: file.slice(0, -SUFFIX.length),
    schema: JSON.parse(readFileSync(new URL(file, jsonDir), 'utf8')),
  }));
}

const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMAS = [
  'items',
  'additionalProperties',
  'additionalItems',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
];
const SHAPE_KEYWORDS = ['type', 'properties', 'items', 'enum', 'const', '$ref', 'additionalProperties'];
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'default']);

/**
 * Prepares one schema for json-schema-to-typescript:
 * - cross-file refs (`files.schema.json`) become local definitions, so one file holds every type once;
 * - allOf/anyOf/oneOf whose branches only constrain (required, not, pattern) are dropped: they
 *   don't change the shape, and would otherwise turn DossierQuery into an odd intersection;
 * - a schema that allows anything is typed `unknown` (the tool would make `{description}` an object).
 */
function localise(schema, titles) {
  if (typeof schema !== 'object' || schema === null) return schema;
  const keys = Object.keys(schema).filter((k) => k !== '$id' && k !== '$schema' && k !== 'errorMessage');
  if (keys.every((k) => ANNOTATIONS.has(k))) return { ...pick(schema, keys), tsType: 'unknown' };
  const out = {};
  for (const key of keys) {
    const value = schema[key];
    if (key === '$ref') {
      const id = value.slice(0, -SUFFIX.length);
      if (!titles.has(id)) throw new Error(`unresolvable $ref "${value}"`);
      out.$ref = `#/definitions/${titles.get(id)}`;
    } else if (SCHEMA_MAPS.includes(key)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, localise(sub, titles)]));
    } else if (SCHEMA_LISTS.includes(key)) {
      if (value.every((branch) => !SHAPE_KEYWORDS.some((k) => k in branch))) continue;
      out[key] = value.map((sub) => localise(sub, titles));
    } else if (SUBSCHEMAS.includes(key)) {
      out[key] = Array.isArray(value) ? value.map((sub) => localise(sub, titles)) : localise(value, titles);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function pick(object, keys) {
  return Object.fromEntries(keys.map((k) => [k, object[k]]));
}

async function generate() {
  const schemas = loadSchemas();
  const titles = new Map(schemas.map(({ id, schema }) => [id, schema.title]));
  const definitions = {};
  for (const { id, schema } of schemas) {
    if (!schema.title) throw new Error(`${id}${SUFFIX}: a title is needed to name its type`);
    definitions[schema.title] = localise(schema, titles);
  }
  // The root maps each schema id to its type, so callers can write SchemaTypes['facture-body'].
  const root = {
    title: 'SchemaTypes',
    description: 'Every schema id of json/ mapped to its type.',
    type: 'object',
    additionalProperties: false,
    required: schemas.map((s) => s.id),
    properties: Object.fromEntries(schemas.map(({ id, schema }) => [id, { $ref: `#/definitions/${schema.title}` }])),
    definitions,
  };
  return compile(root, 'SchemaTypes', {
    bannerComment: BANNER,
    additionalProperties: false, // only schemas that say additionalProperties: true get an index signature
    declareExternallyReferenced: true,
    unreachableDefinitions: true,
    strictIndexSignatures: false,
    format: true,
    cwd: packageDir,
  });
}

const text = await generate();
const shown = relative(process.cwd(), outFile) || outFile;
if (check) {
  let current = null;
  try {
    current = readFileSync(outFile, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    console.error(
      `${shown} is stale: it differs from what json/*.schema.json produce.\n` +
        'Run `npm run generate -w @opco-proxy/schemas` and commit the result.',
    );
    process.exit(1);
  }
  console.log(`${shown} is up to date.`);
} else {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, text);
  console.log(`wrote ${shown}`);
}
