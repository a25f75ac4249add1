/**
 * What `sandbox.received` shows of a request: the wire request as sent, its body parsed the way
 * the route will need it, and, with a `hubSecret`, the outcome of the hub grant check.
 */
import type { IncomingMessage } from 'node:http';
import { mediaType } from './exchange.js';
import { HUB_TOKEN_HEADER, type HubTokenVerifier } from './hub-token.js';
import { MultipartError, parseMultipart } from './multipart.js';
import type { ReceivedRequest } from './types.js';

export interface Recorded {
  entry: ReceivedRequest;
  /** Set when the body claimed to be JSON or multipart and could not be parsed. */
  bodyError?: string;
}

export async function record(
  req: IncomingMessage,
  path: string,
  url: URL,
  body: Buffer,
  at: number,
  hub: HubTokenVerifier | undefined,
): Promise<Recorded> {
  const entry: ReceivedRequest = {
    at,
    method: req.method ?? 'GET',
    path,
    query: Object.fromEntries(url.searchParams),
    headers: { ...req.headers },
  };
  const type = mediaType(req);
  let bodyError: string | undefined;
  if (type === 'multipart/form-data') {
    try {
      entry.parts = await parseMultipart(req.headers, body);
    } catch (error) {
      if (!(error instanceof MultipartError)) throw error;
      bodyError = `corps multipart illisible : ${error.message}`;
    }
  } else if (body.length > 0 && (type === 'application/json' || type.endsWith('+json'))) {
    try {
      entry.json = JSON.parse(body.toString('utf8'));
    } catch {
      bodyError = 'corps JSON invalide';
    }
  }
  if (hub) entry.hubToken = await hub.check(req.headers[HUB_TOKEN_HEADER], entry.method);
  return { entry, bodyError };
}
