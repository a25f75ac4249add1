/**
 * The one way a request's query or body is checked against its JSON Schema (schemas/): 400
 * VALIDATION_ERROR with the schema's messages (`cerfa.apprenti.nom: Required`) in `errors`.
 * The operation router calls it for every operation that declares a query or a body.
 *
 * An optional field sent as null is removed from `value` first, as if absent (issue 37,
 * schemas/src/optional-nulls.ts): what the handler, the idempotency fingerprint, the transforms
 * and the upstream get is the body without it. A required one sent as null is a 400 naming it.
 */
import { validateRequest } from '@opco-proxy/schemas';
import { createError } from '../errors/errors.js';

export function checkRequest<T = Record<string, unknown>>(
  schema: string,
  value: unknown,
  description = 'invalid request body',
): T {
  const result = validateRequest(schema, value);
  if (!result.valid) throw createError('VALIDATION_ERROR', description, { errors: result.errors });
  return value as T;
}
