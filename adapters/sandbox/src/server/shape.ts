/**
 * What makes one upstream API family: its route table and how it words its errors. The gate in
 * routes.ts, the faults and the server are the same for every shape.
 */
import type { ServerResponse } from 'node:http';
import type { RouteHandler } from './route-context.js';
import type { SandboxShape } from './types.js';

export interface ShapeMessages {
  /** 401 of a bearer-token upstream. */
  badToken: string;
  /** 401 of an `api-key` upstream. */
  badGatewayKey(header: string): string;
  missingApiKey: string;
  refusedApiKey: string;
  methodNotAllowed: string;
  unknownRoute: string;
  bodyTooLarge: string;
  internal(detail: string): string;
}

export interface Shape {
  name: SandboxShape;
  routes: Readonly<Record<string, RouteHandler>>;
  /** Writes this family's error body. */
  error(res: ServerResponse, status: number, message: string, headers?: Record<string, string>): void;
  messages: ShapeMessages;
  /** Body of a status fault that gave none. */
  faultBody: unknown;
}
