/**
 * The gate every non-token route passes first, whatever the shape: the caller's authentication
 * (bearer token or static key, 401), then the CFA's `X-API-KEY` (403), then the shape's route
 * table (405 for a known path with another method, else 404).
 */
import type { Shape } from './shape.js';
import type { RouteContext } from './route-context.js';
import type { UpstreamGuard } from './upstream-auth.js';

/** X-API-KEY value the sandbox refuses, to simulate an upstream that rejects a CFA's key. */
export const REFUSED_API_KEY = 'forbidden-key-000';

/**
 * `accepted`: the CFA keys this upstream knows (SandboxOptions.acceptedKeys); any other is
 * refused 403 as a real upstream refuses a key it never issued. Absent: every key but
 * REFUSED_API_KEY is accepted.
 */
export function handleUpstream(
  context: RouteContext,
  path: string,
  shape: Shape,
  guard: UpstreamGuard,
  accepted?: ReadonlySet<string>,
): void {
  const { req, res } = context;
  const { messages } = shape;
  // Order of the real gateway: the caller is checked before the key, so a request with neither is a 401.
  if (!guard.authorizes(req)) {
    if (guard.scheme === 'bearer')
      shape.error(res, 401, messages.badToken, { 'www-authenticate': 'Bearer error="invalid_token"' });
    else shape.error(res, 401, messages.badGatewayKey(guard.header!));
    return;
  }
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    shape.error(res, 403, messages.missingApiKey);
    return;
  }
  if (apiKey === REFUSED_API_KEY || (accepted && !accepted.has(apiKey))) {
    shape.error(res, 403, messages.refusedApiKey);
    return;
  }
  const handler = shape.routes[`${req.method} ${path}`];
  if (handler) {
    handler(context);
    return;
  }
  const allowed = Object.keys(shape.routes)
    .filter((k) => k.endsWith(` ${path}`))
    .map((k) => k.split(' ')[0]);
  if (allowed.length > 0) {
    shape.error(res, 405, messages.methodNotAllowed, { allow: allowed.join(', ') });
    return;
  }
  shape.error(res, 404, messages.unknownRoute);
}
