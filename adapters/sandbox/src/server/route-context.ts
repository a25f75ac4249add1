/** What every upstream route handler receives. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Dataset } from './dataset.js';
import type { ReceivedRequest, SandboxQuirks } from './types.js';

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  query: Record<string, string>;
  /** The entry already pushed to `sandbox.received`, with its parsed json / parts. */
  received: ReceivedRequest;
  /** Set when the body claimed to be JSON or multipart and could not be parsed. */
  bodyError?: string;
  dataset: Dataset;
  quirks: SandboxQuirks;
  pageSize: number;
}

export type RouteHandler = (context: RouteContext) => void;
