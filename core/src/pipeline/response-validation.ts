/**
 * Pipeline step 8 (SPEC 1.1, D14): an answer that is not an object, or lacks one of the
 * `required` fields of the schema the route manifest names for it (or has it of the wrong
 * kind), is unusable and fails the call; an answer that merely drifts from that schema is
 * returned, its drift kept as warnings.
 */
import { operationOfRoute, readSchemaShape, validate } from '@opco-proxy/schemas';
import { createError } from '../errors/errors.js';
import type { RouteKey } from '../profile/profile.js';

/** Returns drift warnings; throws UPSTREAM_INVALID_RESPONSE when the answer is unusable. */
export function checkAnswer(route: RouteKey, body: unknown): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw createError('UPSTREAM_INVALID_RESPONSE', `upstream answer to ${route} is not an object`);
  }
  const schema = operationOfRoute(route).upstreamAnswer;
  if (!schema) return [];
  const record = body as Record<string, unknown>;
  const shape = readSchemaShape(schema);
  const problems: string[] = [];
  for (const field of shape.required) {
    const value = record[field];
    if (value === undefined || value === null) problems.push(`${field}: missing`);
    else if (shape.types[field] === 'array' && !Array.isArray(value)) problems.push(`${field}: not an array`);
    else if (shape.types[field] === 'object' && (typeof value !== 'object' || Array.isArray(value)))
      problems.push(`${field}: not an object`);
  }
  if (problems.length > 0)
    throw createError('UPSTREAM_INVALID_RESPONSE', `upstream answer to ${route} is unusable: ${problems.join(', ')}`);
  const result = validate(schema, body);
  return result.valid ? [] : result.errors;
}
