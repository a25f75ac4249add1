/**
 * The hub's HTTP side (D26): GET /health, GET /metrics (Prometheus, no auth), the admin API, and
 * the service's error body (SPEC 7) for everything that fails, unknown routes included, rendered
 * by the kernel's error renderer from the kernel's error table.
 */
import Koa from 'koa';
import Router from '@koa/router';
import { type AddressLimits } from '@opco-proxy/core/limits';
import { renderErrors, type TrustedProxies } from '@opco-proxy/core/application';
import type { Registry } from 'prom-client';
import { adminRouter, requireAdmin, type AdminDeps } from './admin-routes.js';

export interface HubAppDeps extends AdminDeps {
  registry: Registry;
  addresses: AddressLimits;
  proxies: TrustedProxies;
}

export function createHubApp(deps: HubAppDeps): Koa {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  app.use(renderErrors(deps.log));

  const open = new Router();
  open.get('/health', (ctx) => {
    // A standby is healthy too: it says so, and names the hub that leads.
    const { role, leader } = deps.leadership();
    ctx.body = { status: 'ok', role, leader };
  });
  open.get('/metrics', async (ctx) => {
    ctx.type = deps.registry.contentType;
    ctx.body = await deps.registry.metrics();
  });
  app.use(open.routes());

  // Every /admin path is behind the bearer, even an unknown one: no route map for strangers.
  const checkAdmin = requireAdmin(deps.adminKey, deps.addresses, deps.proxies);
  app.use(async (ctx, next) => {
    if (ctx.path === '/admin' || ctx.path.startsWith('/admin/')) await checkAdmin(ctx, next);
    else await next();
  });
  app.use(adminRouter(deps).routes());
  return app;
}
