/**
 * The service's side of each profile route, from the route manifest of `@opco-proxy/schemas`:
 * the schema of what a client sends (the query of a GET, the body of a POST) and of what the
 * client gets back (the transformed upstream answer, pipeline step 8), and whether a dotted
 * transform path names a field those schemas declare.
 */
import { loadSchema, operationOfRoute, type JsonSchema, type SchemaId } from '@opco-proxy/schemas';
import type { RouteKey } from '@opco-proxy/core';

export function requestSchemaOf(route: RouteKey): SchemaId | undefined {
  const operation = operationOfRoute(route);
  return operation.method === 'GET' ? operation.query : operation.body;
}

/** Absent for POST routes: a job's result is whatever the upstream answered (SPEC 2.5). */
export function answerSchemaOf(route: RouteKey): SchemaId | undefined {
  return operationOfRoute(route).upstreamAnswer;
}

/** `files.schema.json` or a full `$id` -> the schema it names. */
function resolve(schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const id = ref.slice(ref.lastIndexOf('/') + 1).replace(/\.schema\.json$/, '');
  return resolve(loadSchema(id as SchemaId));
}

/** The sub-schemas a value must or may satisfy at once (`allOf`, `oneOf`, `anyOf`), flattened. */
function branches(schema: JsonSchema): JsonSchema[] {
  const resolved = resolve(schema);
  const nested = ['allOf', 'oneOf', 'anyOf'].flatMap((key) =>
    Array.isArray(resolved[key]) ? (resolved[key] as JsonSchema[]) : [],
  );
  return [resolved, ...nested.flatMap(branches)];
}

/**
 * True when every segment of the path is declared: a property name of an object schema, `*` or
 * an index for an array's items (or `*` for an object's declared properties). Open objects
 * (`additionalProperties: true`) accept anything, so they declare nothing: a misspelt path
 * through them is still reported.
 */
export function schemaDeclares(id: SchemaId, segments: readonly string[]): boolean {
  const walk = (schema: JsonSchema, rest: readonly string[]): boolean => {
    if (rest.length === 0) return true;
    const [head, ...tail] = rest;
    return branches(schema).some((branch) => {
      const properties = branch.properties as Record<string, JsonSchema> | undefined;
      if (properties && head !== '*' && Object.hasOwn(properties, head)) return walk(properties[head], tail);
      if (head === '*' && properties) return Object.values(properties).some((property) => walk(property, tail));
      if ((head === '*' || /^\d+$/.test(head)) && branch.items && typeof branch.items === 'object')
        return walk(branch.items as JsonSchema, tail);
      return false;
    });
  };
  return walk(loadSchema(id), segments);
}
