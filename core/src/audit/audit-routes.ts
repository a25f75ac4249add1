/**
 * Reading audit records (D32): a tenant its own, never another's (`GET /audit`); operators every
 * tenant's and their own actions (`GET /admin/audit`). Pages newest first by cursor, the next
 * one also at the address of the `Link` header, as the delivery logs do.
 */
import type { OperationRouter } from '../http/operation-router.js';
import type { AuditLog } from './audit-log.js';

export function mountAuditRoutes(router: OperationRouter, log: AuditLog): void {
  router.mount(
    'listAudit',
    async ({ query, tenant }) => {
      const { cursor, limit, ...filter } = query;
      const page = await log.page(
        { ...filter, tenant: tenant.hash },
        { cursor, limit: limit === undefined ? undefined : Number(limit) },
      );
      return { status: 200, body: page, headers: linkTo('/audit', query, page.next) };
    },
    'kernel',
  );

  router.mount(
    'listAdminAudit',
    async ({ query }) => {
      const { cursor, limit, ...filter } = query;
      const page = await log.page(filter, { cursor, limit: limit === undefined ? undefined : Number(limit) });
      return { status: 200, body: page, headers: linkTo('/admin/audit', query, page.next) };
    },
    'kernel',
  );
}

/** RFC 8288: the same filters, the next cursor. */
function linkTo(path: string, query: object, next: string | null): Record<string, string> {
  if (next === null) return {};
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query) as Array<[string, string | undefined]>)
    if (value !== undefined && name !== 'cursor') params.set(name, value);
  params.set('cursor', next);
  return { Link: `<${path}?${params.toString()}>; rel="next"` };
}
