/**
 * Injected failures, so tests can drive the proxy's retry, timeout and validation paths
 * against a real socket rather than a mocked fetch.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, sendRaw } from './exchange.js';
import type { Fault, FaultControl } from './types.js';

/** Token route of the default (common, OAuth) sandbox; `auth.tokenPath` moves it. */
export const TOKEN_ROUTE = 'POST /oauth/token';

interface ArmedFault {
  fault: Fault;
  remaining: number;
}

export class FaultRegistry implements FaultControl {
  private armed: ArmedFault[] = [];

  /** `tokenRoute`: `"POST <tokenPath>"`, or undefined when the upstream has no token endpoint. */
  constructor(private readonly tokenRoute: string | undefined = TOKEN_ROUTE) {}

  add(fault: Fault): void {
    const remaining = fault.times ?? Infinity;
    if (!(remaining > 0)) return;
    this.armed.push({ fault: { ...fault }, remaining });
  }

  clear(): void {
    this.armed = [];
  }

  /**
   * First armed fault matching `"METHOD /path"`, consumed once. The token route is only hit by
   * a fault naming it exactly, so a catch-all fault does not also break authentication.
   */
  take(routeKey: string): Fault | undefined {
    const index = this.armed.findIndex(({ fault }) =>
      routeKey === this.tokenRoute
        ? fault.route === this.tokenRoute
        : fault.route === undefined || routeMatches(routeKey, fault.route),
    );
    if (index < 0) return undefined;
    const entry = this.armed[index];
    entry.remaining--;
    if (entry.remaining <= 0) this.armed.splice(index, 1);
    return entry.fault;
  }
}

/** What the server offers a fault: a sleep that close() interrupts. */
export interface FaultContext {
  /** Resolves true after `ms`, or false as soon as the sandbox closes. */
  sleep(ms: number): Promise<boolean>;
  /** Body of a status fault that gave none: the shape's error body. */
  defaultBody: unknown;
}

/**
 * Plays the fault. Returns true when the request is fully dealt with, false when normal
 * handling must go on (a pure latency / header fault).
 */
export async function playFault(fault: Fault, res: ServerResponse, context: FaultContext): Promise<boolean> {
  if (fault.latencyMs && fault.latencyMs > 0) {
    if (!(await context.sleep(fault.latencyMs))) return true;
  }
  // Set now so that they also ride on a normal answer written later by the route.
  for (const [name, value] of Object.entries(fault.headers ?? {})) res.setHeader(name, value);
  if (fault.hang) return true;
  if (fault.destroy) {
    res.socket?.destroy();
    return true;
  }
  if (fault.garbage) {
    sendRaw(res, 200, 'text/html; charset=utf-8', '<html><body>oops: upstream maintenance</body></html>');
    return true;
  }
  if (fault.nullBody) {
    sendRaw(res, 200, 'application/json; charset=utf-8', 'null');
    return true;
  }
  if (fault.status !== undefined) {
    sendJson(res, fault.status, fault.body === undefined ? context.defaultBody : fault.body);
    return true;
  }
  return false;
}

/**
 * A prefix, or with a final `$` the exact route: the classic liste route `GET /api/v3/dossiers`
 * is a prefix of its etats route, and a test may want to break one and not the other.
 */
function routeMatches(routeKey: string, route: string): boolean {
  return route.endsWith('$') ? routeKey === route.slice(0, -1) : routeKey.startsWith(route);
}
