/**
 * Where plugins add routes. Paths that start with a literal segment (`/sync/dossiers`,
 * `/webhooks`) are mounted before paths under `/:opcoId/` (`/:opcoId/dossiers`), whatever the
 * order plugins register in, so an opcoId can never shadow a service route.
 */
import Router from '@koa/router';
import type { State } from './http-middleware.js';

export type RouteHandler = Router.Middleware<State>;

export class PluginRoutes {
  readonly fixed = new Router<State>();
  readonly byOpco = new Router<State>();

  get(path: string, handler: RouteHandler): this {
    this.pick(path).get(path, handler);
    return this;
  }

  post(path: string, handler: RouteHandler): this {
    this.pick(path).post(path, handler);
    return this;
  }

  patch(path: string, handler: RouteHandler): this {
    this.pick(path).patch(path, handler);
    return this;
  }

  delete(path: string, handler: RouteHandler): this {
    this.pick(path).delete(path, handler);
    return this;
  }

  private pick(path: string): Router<State> {
    return path.startsWith('/:') ? this.byOpco : this.fixed;
  }
}
