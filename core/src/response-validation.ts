/**
 * Pipeline step 8 (SPEC 1.1, D14): an answer without its root fields is unusable and fails the
 * call; an answer that merely drifts from the schema is returned, its drift kept as warnings.
 */
import { validate } from '@opco-proxy/schemas';
import { createError } from './errors.js';
import type { RouteKey } from './profile.js';

interface AnswerRule {
  /** Fields without which the answer cannot be used. */
  root: string[];
  /** Arrays among the root fields. */
  arrays?: string[];
  /** Schema the full answer is compared with, for drift warnings. */
  schema?: string;
}

const ANSWER_RULES: Record<RouteKey, AnswerRule> = {
  'GET /status': { root: [] },
  'GET /cfakeyinfo': { root: ['status'], schema: 'cfakeyinfo-response' },
  'GET /dossiers': { root: ['status', 'cerfa'], schema: 'dossier' },
  'GET /dossiers/etats': { root: ['status', 'EtatDossierResult'], arrays: ['EtatDossierResult'], schema: 'etats-page' },
  'GET /dossiers/liste': { root: ['status', 'dossiers'], arrays: ['dossiers'], schema: 'liste' },
  'GET /factures/etats': { root: ['status', 'factures'], arrays: ['factures'], schema: 'factures-etats-page' },
  'POST /dossiers': { root: [] },
  'POST /factures': { root: [] },
  'POST /conventions': { root: [] },
  'POST /certificats': { root: [] },
  'POST /documents': { root: [] },
};

/** Returns drift warnings; throws UPSTREAM_INVALID_RESPONSE when the answer is unusable. */
export function checkAnswer(route: RouteKey, body: unknown): string[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw createError('UPSTREAM_INVALID_RESPONSE', `upstream answer to ${route} is not an object`);
  }
  const rule = ANSWER_RULES[route];
  const record = body as Record<string, unknown>;
  const missing = rule.root.filter((field) => record[field] === undefined || record[field] === null);
  const notArrays = (rule.arrays ?? []).filter((field) => record[field] !== undefined && !Array.isArray(record[field]));
  if (missing.length > 0 || notArrays.length > 0) {
    const problems = [...missing.map((f) => `${f}: missing`), ...notArrays.map((f) => `${f}: not an array`)];
    throw createError('UPSTREAM_INVALID_RESPONSE', `upstream answer to ${route} is unusable: ${problems.join(', ')}`);
  }
  if (!rule.schema) return [];
  const result = validate(rule.schema, body);
  return result.valid ? [] : result.errors;
}
