/**
 * What each job type sends upstream, step by step (SPEC 4.8-4.12b, D16). A dossier with files
 * is composite: step 1 posts the dossier, then one step per file posts it as a document
 * attached to the new dossier. Every other job is a single step carrying all its files.
 */
import { createError, type RouteKey } from '@opco-proxy/core';
import type { JobInputs } from './job-secrets.js';
import type { JobStep, JobType } from './job-records.js';

export interface JobKind {
  type: JobType;
  route: RouteKey;
  /** Schema id of the request body. */
  schema: string;
  path: string;
}

export const JOB_KINDS: JobKind[] = [
  { type: 'post-dossier', route: 'POST /dossiers', schema: 'dossier-body', path: '/:opcoId/dossiers' },
  { type: 'post-facture', route: 'POST /factures', schema: 'facture-body', path: '/:opcoId/factures' },
  { type: 'post-convention', route: 'POST /conventions', schema: 'convention-body', path: '/:opcoId/conventions' },
  { type: 'post-certificat', route: 'POST /certificats', schema: 'certificat-body', path: '/:opcoId/certificats' },
  { type: 'post-document', route: 'POST /documents', schema: 'document-body', path: '/:opcoId/documents' },
];

const DOCUMENT_STEP = 'document:';

export function kindOf(type: JobType): JobKind {
  return JOB_KINDS.find((kind) => kind.type === type)!;
}

/** The steps of a new job; `fileRoles` in the order the files will be sent. */
export function planSteps(type: JobType, fileRoles: string[]): JobStep[] {
  const names = type === 'post-dossier' ? ['dossier', ...fileRoles.map((role) => DOCUMENT_STEP + role)] : [type.replace('post-', '')];
  return names.map((name, index) => ({ step: index + 1, name, status: 'pending', attempts: 0 }));
}

/** The routes a job will call, for the capability check at submission (SPEC 1.1 step 2). */
export function routesOf(type: JobType, fileRoles: string[]): RouteKey[] {
  const routes = [kindOf(type).route];
  if (type === 'post-dossier' && fileRoles.length > 0) routes.push('POST /documents');
  return routes;
}

export interface StepCall {
  route: RouteKey;
  body: unknown;
  files: Record<string, Buffer>;
}

export function stepCall(type: JobType, step: JobStep, steps: JobStep[], inputs: JobInputs): StepCall {
  if (!step.name.startsWith(DOCUMENT_STEP)) {
    const composite = steps.length > 1;
    return { route: kindOf(type).route, body: inputs.body, files: composite ? {} : inputs.files };
  }
  const role = step.name.slice(DOCUMENT_STEP.length);
  const numeroInterne = (steps[0].result as { numeroInterne?: unknown } | undefined)?.numeroInterne;
  if (typeof numeroInterne !== 'string' && typeof numeroInterne !== 'number') {
    throw createError('UPSTREAM_INVALID_RESPONSE', 'the upstream answer to the dossier gave no numeroInterne to attach documents to');
  }
  const file = inputs.files[role];
  return {
    route: 'POST /documents',
    body: { typeFichier: role, objets: [{ typeObjet: 'dossier', idObjet: String(numeroInterne) }] },
    files: file ? { [role]: file } : {},
  };
}

/** The composite job's result: the dossier's answer, plus what each document step answered. */
export function jobResult(steps: JobStep[]): unknown {
  if (steps.length === 1) return steps[0].result;
  const [dossier, ...documents] = steps;
  return { ...(dossier.result as object), documents: documents.map((step) => ({ name: step.name, result: step.result })) };
}
