/**
 * The reads a sync and a poller make, through the one pipeline at low priority (SPEC 8:
 * 10), so they wait for budget left over by client requests instead of taking it from them.
 */
import { PRIORITY, type OpcoDirectory, type Pipeline, type Tenant } from '@opco-proxy/core';

export interface ReadDeps {
  opcos: OpcoDirectory;
  pipeline: Pipeline;
}

export interface EtatItem {
  numeroInterne: string;
  numeroExterne?: string;
  numeroDeca?: string;
  etat?: string;
}

type Cancelled = () => boolean | Promise<boolean>;

/** Every page of `dossiers/etats` for the query, in order. */
export async function* etatsPages(
  deps: ReadDeps,
  opcoId: string,
  tenant: Tenant,
  query: Record<string, string>,
  cancelled?: Cancelled,
) {
  let collected = 0;
  for (let page = 1; ; page++) {
    const body = (await read(
      deps,
      opcoId,
      'GET /dossiers/etats',
      tenant,
      { ...query, numeroPage: String(page) },
      cancelled,
    )) as {
      total?: number;
      EtatDossierResult: EtatItem[];
    };
    const items = body.EtatDossierResult ?? [];
    const total = typeof body.total === 'number' ? body.total : items.length;
    collected += items.length;
    yield { items, total };
    if (items.length === 0 || collected >= total) return;
  }
}

/** Every invoice of `factures/etats` for the query. */
export async function allFactures(
  deps: ReadDeps,
  opcoId: string,
  tenant: Tenant,
  query: Record<string, string>,
): Promise<Array<Record<string, unknown>>> {
  const all: Array<Record<string, unknown>> = [];
  for (let page = 1; ; page++) {
    const body = (await read(deps, opcoId, 'GET /factures/etats', tenant, { ...query, numeroPage: String(page) })) as {
      total?: number;
      factures: Array<Record<string, unknown>>;
    };
    all.push(...(body.factures ?? []));
    if ((body.factures ?? []).length === 0 || all.length >= (body.total ?? 0)) return all;
  }
}

export async function liste(
  deps: ReadDeps,
  opcoId: string,
  tenant: Tenant,
  numeros: string[],
  cancelled?: Cancelled,
): Promise<Array<Record<string, unknown>>> {
  const body = (await read(
    deps,
    opcoId,
    'GET /dossiers/liste',
    tenant,
    { numerosInternes: numeros.join(',') },
    cancelled,
  )) as { dossiers: Array<Record<string, unknown>> };
  return body.dossiers ?? [];
}

function read(
  deps: ReadDeps,
  opcoId: string,
  route: 'GET /dossiers/etats' | 'GET /dossiers/liste' | 'GET /factures/etats',
  tenant: Tenant,
  query: Record<string, string>,
  cancelled?: Cancelled,
) {
  // Fresh: a sync or a poll must see the upstream as it is now, not a cached page.
  return deps.pipeline.run(
    deps.opcos.context(opcoId, route, tenant, { query, priority: PRIORITY.low, cancelled, fresh: true }),
  );
}
