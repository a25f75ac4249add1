/**
 * Validation of queries, bodies, responses and config against the JSON Schemas (SPEC 4.0.3, 7):
 * one ajv instance, every schema compiled once, errors turned into the spec's messages,
 * `<dotted.path>: <message>` (`lignes.0.natureLigne: Invalid enum value, expected one of ...`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import ajvErrors from 'ajv-errors';
import { allSchemaIds, isSchemaId, readSchema, schemaUri, type JsonSchema, type SchemaId } from './catalog.js';
import { removeOptionalNulls } from './optional-nulls.js';

export type ValidationResult = { valid: true } | { valid: false; errors: string[] };

let ajv: Ajv | undefined;
const compiled = new Map<SchemaId, ValidateFunction>();

/**
 * Checks `data` against the schema `schemaId` (see `schemaIds`). Any string is accepted so callers
 * holding an id in a plain string compile, but an id that is not in json/ throws: that is a bug,
 * not a client error.
 */
export function validate(schemaId: SchemaId | (string & {}), data: unknown): ValidationResult {
  const check = compile(schemaId);
  if (check(data)) return { valid: true };
  return { valid: false, errors: formatErrors(check.errors ?? [], rootLabel(schemaId), data) };
}

/**
 * Checks a request's body or query against `schemaId` as a client means it: an optional property
 * sent as null is removed from `data` first, as if absent (optional-nulls.ts). `data` is changed
 * in place, so whatever reads the request afterwards sees it without those nulls.
 */
export function validateRequest(schemaId: SchemaId | (string & {}), data: unknown): ValidationResult {
  if (!isSchemaId(schemaId)) throw new Error(`unknown schema id "${schemaId}"`);
  return validate(schemaId, removeOptionalNulls(schemaId, data));
}

const assembled = new WeakMap<object, ValidateFunction>();

/**
 * Checks `data` against a schema assembled at run time (the config schema with the application's
 * plugin sections: core/src/config/config-sections.ts), on the same instance and with the same messages;
 * compiled once per schema object.
 */
export function validateAssembled(schema: JsonSchema, data: unknown, root: string): ValidationResult {
  let check = assembled.get(schema);
  if (!check) {
    const { $id: _id, ...anonymous } = schema; // an $id would clash with the file's registered one
    check = instance().compile(anonymous);
    assembled.set(schema, check);
  }
  if (check(data)) return { valid: true };
  return { valid: false, errors: formatErrors(check.errors ?? [], root, data) };
}

function compile(schemaId: string): ValidateFunction {
  if (!isSchemaId(schemaId)) throw new Error(`unknown schema id "${schemaId}"`);
  let check = compiled.get(schemaId);
  if (!check) {
    check = instance().getSchema(schemaUri(schemaId));
    if (!check) throw new Error(`schema "${schemaId}" is not registered`);
    compiled.set(schemaId, check);
  }
  return check;
}

function instance(): Ajv {
  if (ajv) return ajv;
  ajv = new Ajv({
    allErrors: true, // one entry per field problem (SPEC 7), and required by ajv-errors
    strictSchema: true,
    strictTypes: true,
    strictTuples: true,
    strictRequired: false, // DossierQuery's modes name properties declared at the root
    allowUnionTypes: true, // "string or null" fields of the spec
  });
  ajvFormats.default(ajv, ['date', 'date-time', 'uri', 'uuid']);
  // `byte` (OpenAPI's name for base64) for _files. ajv-formats' own regex recurses per 4 characters
  // and overflows the stack on multi-MiB files, so this check is a flat scan plus a length rule.
  ajv.addFormat('byte', { type: 'string', validate: isBase64 });
  // D31: date fields of request bodies take a calendar date or a full ISO 8601 timestamp.
  ajv.addFormat('date-or-timestamp', { type: 'string', validate: isDateOrTimestamp });
  ajvErrors.default(ajv);
  // Keyed by id as well as by $id, so a schema whose $id strays from the convention still resolves.
  for (const id of allSchemaIds) ajv.addSchema(readSchema(id), schemaUri(id));
  return ajv;
}

/** Standard base64, padded or not (Node decodes both); no line breaks. */
export function isBase64(value: string): boolean {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) return false;
  const padded = value.endsWith('=');
  return padded ? value.length % 4 === 0 : value.length % 4 !== 1;
}

const DATE_OR_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?$/;

/** D31: `YYYY-MM-DD` or an ISO 8601 timestamp, whose date (its first ten characters) exists. */
export function isDateOrTimestamp(value: string): boolean {
  const match = DATE_OR_TIMESTAMP.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** What a problem of the whole value is called: `query: use either ...`, `body: Must contain ...`. */
function rootLabel(schemaId: string): string {
  if (schemaId.endsWith('-query')) return 'query';
  if (schemaId.endsWith('-body')) return 'body';
  return 'value';
}

const FORMAT_MESSAGES: Record<string, string> = {
  date: 'Invalid date',
  'date-or-timestamp': 'Invalid date',
  'date-time': 'Invalid datetime',
  uri: 'Invalid url',
  uuid: 'Invalid uuid',
  byte: 'Invalid base64',
};

function formatErrors(errors: ErrorObject[], root: string, data: unknown): string[] {
  const messages = new Set<string>(); // a Set: a body with thousands of bad items stays linear
  // A null where a value is needed (a required field sent as null) is said so, once: its type
  // error says `received null`, and what else its schema asks (an enum, a format) goes unsaid.
  const nulls = new Set(
    errors
      .filter((e) => e.keyword === 'type' && valueAt(data, pointerSegments(e.instancePath)) === null)
      .map((e) => e.instancePath),
  );
  for (const error of errors) {
    // Errors about a property *name* are reported once, by the propertyNames error itself.
    if (error.propertyName !== undefined) continue;
    // `if` only says which branch failed; the `then` errors that follow say why.
    if (error.keyword === 'if') continue;
    const isNull = nulls.has(error.instancePath);
    if (isNull && error.keyword !== 'type') continue;
    const segments = pointerSegments(error.instancePath);
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') segments.push(String(params.missingProperty));
    if (error.keyword === 'additionalProperties') segments.push(String(params.additionalProperty));
    const path = segments.length > 0 ? segments.join('.') : root;
    const message = describe(error, params) + (isNull && error.keyword === 'type' ? ', received null' : '');
    const line = `${path}: ${message}`;
    messages.add(line);
  }
  return [...messages];
}

/** The value at `segments` of `data`. */
function valueAt(data: unknown, segments: string[]): unknown {
  let value = data;
  for (const segment of segments) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function describe(error: ErrorObject, params: Record<string, unknown>): string {
  const limit = Number(params.limit);
  switch (error.keyword) {
    case 'errorMessage':
      return error.message ?? 'Invalid value';
    case 'required':
      return 'Required';
    case 'type':
      return `Expected ${String(params.type).split(',').join(' or ')}`;
    case 'format':
      return FORMAT_MESSAGES[String(params.format)] ?? `Invalid ${String(params.format)}`;
    case 'enum':
      return `Invalid enum value, expected one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `Invalid literal value, expected ${String(params.allowedValue)}`;
    case 'minItems':
      return `Must contain at least ${limit} ${plural(limit, 'item')}`;
    case 'maxItems':
      return `Must contain at most ${limit} ${plural(limit, 'item')}`;
    case 'minLength':
      return limit === 1 ? 'Must not be empty' : `Must be at least ${limit} ${plural(limit, 'character')}`;
    case 'maxLength':
      return `Must be at most ${limit} ${plural(limit, 'character')}`;
    case 'minimum':
      return `Must be greater than or equal to ${limit}`;
    case 'maximum':
      return `Must be less than or equal to ${limit}`;
    case 'exclusiveMinimum':
      return `Must be greater than ${limit}`;
    case 'exclusiveMaximum':
      return `Must be less than ${limit}`;
    case 'minProperties':
      return `Must contain at least ${limit} ${plural(limit, 'field')}`;
    case 'maxProperties':
      return `Must contain at most ${limit} ${plural(limit, 'field')}`;
    case 'uniqueItems':
      return 'Must not contain duplicate items';
    case 'additionalProperties':
      return 'Unrecognized field';
    case 'propertyNames':
      return `Invalid key "${String(params.propertyName)}"`;
    case 'pattern':
      return 'Invalid format';
    default:
      return 'Invalid value';
  }
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}
