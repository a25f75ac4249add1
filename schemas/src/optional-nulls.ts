/**
 * Optional means null is fine (issue 37): Java and .NET serializers write an absent optional field
 * as `null`. So before a request body is validated, a property its JSON Schema declares, does not
 * require, and gives null no meaning (its type is not `["string","null"]`) is removed when it holds
 * null. Validation, the idempotency fingerprint, the transforms and the upstream then see the body
 * as if the field had never been sent. A required property holding null stays, and validation
 * names it (`apprenti.nom: Expected string, received null`). A property the schema lets be null
 * keeps its null: there it is a value (the profiles' dropNulls still keeps it from the upstream).
 *
 * What to remove is read from the schemas, not written per route: a schema's plan (which declared
 * properties may go, which objects and arrays to go down into) is compiled once per schema id, by
 * following `properties`, `required`, `items`, `$ref`, `allOf`, `anyOf` and `oneOf`. Applying it
 * goes where the plan goes, once: only objects and arrays the schema declares, a lookup per
 * declared property, never a string's content and never `_files` (a map with no declared property).
 * Undeclared properties are left as they are: their schema (`additionalProperties`) is not ours.
 */
import { readSchema, refToSchemaId, type JsonSchema, type SchemaId } from './catalog.js';

/** What to do in a value of one schema: absent when there is nothing to do anywhere below it. */
interface Plan {
  /** The declared properties that may hold null to remove, or an object or array to go down into. */
  properties?: PropertyPlan[];
  /** The names of those whose null is removed. */
  dropped?: Set<string>;
  /** The plan of every item, when the value is an array. */
  items?: Plan;
}

interface PropertyPlan {
  name: string;
  /** Optional, and null means nothing for it: null is removed. */
  dropNull: boolean;
  plan?: Plan;
}

const plans = new Map<SchemaId, Plan | undefined>();
const assembledPlans = new WeakMap<JsonSchema, Plan | undefined>();

/**
 * Removes, at any depth, the optional properties of `value` that hold null and that `schema` (an
 * id of json/, or a schema object whose file `$ref`s point into json/) gives null no meaning for.
 * `value` itself is changed in place and returned; an object below it that had such a property is
 * replaced, in its parent, by a copy without it (its values not copied): `delete` would leave a
 * slow object behind, and costs 40 times as much on 100,000 lignes.
 */
export function removeOptionalNulls<T>(schema: SchemaId | JsonSchema, value: T): T {
  const plan = planOf(schema);
  if (plan && typeof value === 'object' && value !== null) cleaned(value, plan, true);
  return value;
}

function planOf(schema: SchemaId | JsonSchema): Plan | undefined {
  if (typeof schema === 'string') {
    if (!plans.has(schema)) plans.set(schema, compile([readSchema(schema)], new Set()));
    return plans.get(schema);
  }
  if (!assembledPlans.has(schema)) assembledPlans.set(schema, compile([schema], new Set()));
  return assembledPlans.get(schema);
}

/** `value` without its optional nulls, below too: itself (changed in place when `inPlace`), or a copy. */
function cleaned(value: object, plan: Plan, inPlace: boolean): object {
  if (Array.isArray(value)) {
    const items = value as unknown[];
    if (!plan.items) return items;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item !== 'object' || item === null) continue;
      const clean = cleaned(item, plan.items, false);
      if (clean !== item) items[i] = clean;
    }
    return items;
  }
  if (!plan.properties) return value;
  const object = value as Record<string, unknown>;
  let nulls = 0;
  for (const property of plan.properties) {
    const held = object[property.name];
    if (held === null) {
      if (property.dropNull) nulls += 1;
    } else if (property.plan && typeof held === 'object' && Object.hasOwn(object, property.name)) {
      const clean = cleaned(held, property.plan, false);
      if (clean !== held) object[property.name] = clean;
    }
  }
  if (nulls === 0) return value;
  if (inPlace) {
    for (const name of plan.dropped!) if (object[name] === null) delete object[name];
    return value;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const held = object[key];
    if (held === null && plan.dropped!.has(key)) continue;
    // A `__proto__` key of JSON.parse is an own property; kept as one, never as the prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, { value: held, enumerable: true, writable: true, configurable: true });
    else copy[key] = held;
  }
  return copy;
}

/**
 * The plan of a value that must match every schema of `schemas` (a property declared by several
 * branches), from all they declare: a property required by one of them is required, and one
 * that any of its declarations lets be null keeps its null. `visiting` stops a recursive schema.
 */
function compile(schemas: JsonSchema[], visiting: Set<JsonSchema>): Plan | undefined {
  const facets = schemas.flatMap((schema) => facetsOf(schema, visiting));
  const required = new Set<string>();
  const declared = new Map<string, JsonSchema[]>();
  const items: JsonSchema[] = [];
  for (const facet of facets) {
    for (const name of (facet.required as string[] | undefined) ?? []) required.add(name);
    for (const [name, property] of Object.entries((facet.properties ?? {}) as Record<string, JsonSchema | boolean>)) {
      if (typeof property !== 'object') continue;
      declared.set(name, [...(declared.get(name) ?? []), property]);
    }
    if (typeof facet.items === 'object' && facet.items !== null && !Array.isArray(facet.items))
      items.push(facet.items as JsonSchema);
  }
  for (const facet of facets) visiting.add(facet);
  const properties: PropertyPlan[] = [];
  for (const [name, declarations] of declared) {
    const dropNull = !required.has(name) && !declarations.some(admitsNull);
    const plan = compile(declarations, visiting);
    if (dropNull || plan) properties.push({ name, dropNull, ...(plan ? { plan } : {}) });
  }
  const itemsPlan = items.length > 0 ? compile(items, visiting) : undefined;
  for (const facet of facets) visiting.delete(facet);
  if (properties.length === 0 && !itemsPlan) return undefined;
  const dropped = new Set(properties.filter((p) => p.dropNull).map((p) => p.name));
  return { ...(properties.length > 0 ? { properties, dropped } : {}), ...(itemsPlan ? { items: itemsPlan } : {}) };
}

/** A schema and what it takes in from `$ref`, `allOf`, `anyOf` and `oneOf`, recursively. */
function facetsOf(schema: JsonSchema, visiting: Set<JsonSchema>): JsonSchema[] {
  if (visiting.has(schema)) return [];
  const facets = [schema];
  const target = referenced(schema);
  if (target) facets.push(...facetsOf(target, visiting));
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    for (const branch of (schema[keyword] as JsonSchema[] | undefined) ?? [])
      if (typeof branch === 'object') facets.push(...facetsOf(branch, visiting));
  }
  return facets;
}

function referenced(schema: JsonSchema): JsonSchema | undefined {
  if (typeof schema.$ref !== 'string') return undefined;
  const id = refToSchemaId(schema.$ref);
  return id ? readSchema(id) : undefined;
}

/**
 * Whether null is a valid value of `schema`, so a meaningful one: `["string","null"]`, an enum or
 * const with null, no type at all. A `$ref` the catalogue cannot resolve is taken to allow it.
 */
export function admitsNull(schema: JsonSchema | boolean): boolean {
  if (typeof schema === 'boolean') return schema;
  if (typeof schema.$ref === 'string') {
    const target = referenced(schema);
    return target ? admitsNull(target) : true;
  }
  const type = schema.type;
  if (type !== undefined && !(type === 'null' || (Array.isArray(type) && type.includes('null')))) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
  if ('const' in schema && schema.const !== null) return false;
  const branches = (keyword: string) => (schema[keyword] as Array<JsonSchema | boolean> | undefined) ?? [];
  if (!branches('allOf').every(admitsNull)) return false;
  if (schema.anyOf !== undefined && !branches('anyOf').some(admitsNull)) return false;
  if (schema.oneOf !== undefined && !branches('oneOf').some(admitsNull)) return false;
  return true;
}
