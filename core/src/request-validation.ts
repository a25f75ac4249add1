/**
 * The one way a request's query or body is checked against its JSON Schema (schemas/): 400
 * VALIDATION_ERROR with the schema's messages (`cerfa.apprenti.nom: Required`) in `errors`.
 * The operation router calls it for every operation that declares a query or a body.
 */
import { validate } from '@opco-proxy/schemas';
import { createError } from './errors.js';

export function checkRequest<T = Record<string, unknown>>(schema: string, value: unknown, description = 'invalid request body'): T {
  const result = validate(schema, value);
  if (!result.valid) throw createError('VALIDATION_ERROR', description, { errors: result.errors });
  return value as T;
}
