/**
 * What each job type sends upstream, step by step (SPEC 4.8-4.12b, D16), from the route
 * manifest: each asynchronous POST operation names its job type and profile route. A dossier
 * with files is composite: step 1 posts the dossier, then one step per file posts it as a
 * document attached to the new dossier. Every other job is a single step carrying all its files.
 */
import { createError, type RouteKey } from '@opco-proxy/core';
import { operations } from '@opco-proxy/schemas';
import type { OpenedInputs } from './job-secrets.js';
import type { JobStep, JobType } from './job-records.js';

/** The operations that become jobs (SPEC 4.0.4). */
export const JOB_OPERATIONS = [
  'postDossier',
  'postFacture',
  'postConvention',
  'postCertificat',
  'postDocument',
] as const;
export type JobOperation = (typeof JOB_OPERATIONS)[number];

export interface JobKind {
  type: JobType;
  route: RouteKey;
}

export function kindOfOperation(operation: JobOperation): JobKind {
  const spec = operations[operation];
  return { type: spec.jobType as JobType, route: spec.profileRoute };
}

export function kindOf(type: JobType): JobKind {
  return JOB_OPERATIONS.map(kindOfOperation).find((kind) => kind.type === type)!;
}

const DOCUMENT_STEP = 'document:';

/** The steps of a new job; `fileRoles` in the order the files will be sent. */
export function planSteps(type: JobType, fileRoles: string[]): JobStep[] {
  const names =
    type === 'post-dossier'
      ? ['dossier', ...fileRoles.map((role) => DOCUMENT_STEP + role)]
      : [type.replace('post-', '')];
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
  files: Record<string, Buffer[]>;
}

export function stepCall(type: JobType, step: JobStep, steps: JobStep[], inputs: OpenedInputs): StepCall {
  if (!step.name.startsWith(DOCUMENT_STEP)) {
    const composite = steps.length > 1;
    return { route: kindOf(type).route, body: inputs.body, files: composite ? {} : inputs.files };
  }
  const role = step.name.slice(DOCUMENT_STEP.length);
  const first = steps[0].resultJson;
  const numeroInterne =
    first === undefined ? undefined : (JSON.parse(first) as { numeroInterne?: unknown }).numeroInterne;
  if (typeof numeroInterne !== 'string' && typeof numeroInterne !== 'number') {
    throw createError(
      'UPSTREAM_INVALID_RESPONSE',
      'the upstream answer to the dossier gave no numeroInterne to attach documents to',
    );
  }
  const file = inputs.files[role];
  return {
    route: 'POST /documents',
    body: { typeFichier: role, objets: [{ typeObjet: 'dossier', idObjet: String(numeroInterne) }] },
    files: file ? { [role]: file } : {},
  };
}

/** The job's result as JSON text: the dossier's answer, plus what each document step answered. */
export function jobResultJson(steps: JobStep[]): string {
  if (steps.length === 1) return steps[0].resultJson ?? '{}';
  const [dossier, ...documents] = steps;
  const result = dossier.resultJson === undefined ? {} : (JSON.parse(dossier.resultJson) as object);
  return JSON.stringify({
    ...result,
    documents: documents.map((step) => ({
      name: step.name,
      result: step.resultJson === undefined ? {} : (JSON.parse(step.resultJson) as object),
    })),
  });
}
