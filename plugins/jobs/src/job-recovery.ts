/**
 * D18: before sending again a dossier whose earlier call may have reached the upstream, look it
 * up by its numeroExterne (the upstream allows that lookup); if it exists, the step is done.
 * Other resources cannot be looked up and are sent again.
 */
import { PRIORITY, isServiceError, type OpcoDirectory, type Pipeline, type Tenant } from '@opco-proxy/core';
import type { StepCall } from './job-plan.js';

interface RecoveryDeps {
  opcos: OpcoDirectory;
  pipeline: Pipeline;
}

export async function findExistingDossier(
  deps: RecoveryDeps,
  opcoId: string,
  call: StepCall,
  tenant: Tenant,
): Promise<unknown> {
  if (call.route !== 'POST /dossiers') return null;
  const body = call.body as {
    numeroExterne?: unknown;
    numeroDeca?: unknown;
    cerfa?: { numeroExterne?: unknown; numeroDeca?: unknown };
  };
  const numeroExterne = body.numeroExterne ?? body.cerfa?.numeroExterne;
  const numeroDeca = body.numeroDeca ?? body.cerfa?.numeroDeca;
  if (typeof numeroExterne !== 'string' || !deps.opcos.get(opcoId).profile.routes['GET /dossiers']) return null;
  const query: Record<string, string> = { numeroExterne };
  if (typeof numeroDeca === 'string' && numeroDeca) query.numeroDeca = numeroDeca;
  try {
    const found = (await deps.pipeline.run(
      deps.opcos.context(opcoId, 'GET /dossiers', tenant, { query, priority: PRIORITY.client }),
    )) as {
      numeroInterne?: unknown;
    };
    return { status: 'success', numeroInterne: found.numeroInterne, numeroExterne, recovered: true };
  } catch (err) {
    if (isServiceError(err) && err.code === 'NOT_FOUND') return null;
    throw err;
  }
}
