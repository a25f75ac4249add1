/** What the HTTP middlewares leave on `ctx.state` for the ones after them. */
import type { Tenant } from '../call-context.js';

export interface State {
  requestId: string;
  /** Set by the route once X-API-KEY is checked (SPEC 5.1, 5.3). */
  tenant?: Tenant;
  /** The operation the request was routed to (access log, metrics). */
  operationId?: string;
}
