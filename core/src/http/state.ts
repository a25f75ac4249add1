/** What the HTTP middlewares leave on `ctx.state` for the ones after them. */
export interface State {
  requestId: string;
  /** The client's W3C trace context, when it sent a well-formed one (tracing plugins). */
  traceparent?: string;
  /** The operation the request was routed to (access log, metrics). */
  operationId?: string;
}

const templates = new Map<string, string>();

/**
 * The route a request matched, as a template (`/{opcoId}/jobs/{jobId}`), for logs and metrics;
 * undefined when none matched. Memoised: the router's paths are a fixed few.
 */
export function matchedRouteTemplate(ctx: object): string | undefined {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched !== 'string') return undefined;
  let template = templates.get(matched);
  if (template === undefined) {
    template = matched.replace(/:([A-Za-z]+)/g, '{$1}');
    templates.set(matched, template);
  }
  return template;
}
