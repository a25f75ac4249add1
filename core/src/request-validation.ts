/**
 * The one way a route checks a request body against its JSON Schema (schemas/): 400
 * VALIDATION_ERROR with the schema's messages (`cerfa.apprenti.nom: Required`) in `errors`.
 */
import { validate } from '@opco-proxy/schemas';
import { createError } from './errors.js';

export function checkBody<T = Record<string, unknown>>(schema: string, body: unknown): T {
  const result = validate(schema, body);
  if (!result.valid) throw createError('VALIDATION_ERROR', 'invalid request body', { errors: result.errors });
  return body as T;
}
