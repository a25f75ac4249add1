/**
 * The HTTP exchange of one attempt: the notification POSTed on its destination's keep-alive agent,
 * every new connection looked up (and checked) by the SSRF guard's `lookup`, no redirect followed
 * (node's client follows none), the answer's body read and dropped. node:http itself, as the
 * bare sender the fan-out is measured against: got's per-request option handling cost more CPU
 * than the rest of the send (bench/RESULTS.md, webhooks).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { DestinationAgents } from './destinations.js';

export class AttemptTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

export interface PostOptions {
  agents: DestinationAgents;
  lookup: LookupFunction;
  /** From the start of the request to the end of the answer. */
  timeoutMs: number;
}

/** The answer's status code, once its body has been read; rejects on a network error or the timeout. */
export function postNotification(url: URL, body: string, headers: Record<string, string>, options: PostOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    let settled = false;
    const settle = (err: Error | null, status = 0) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(status);
    };
    const req = send(url, {
      method: 'POST',
      agent: https ? options.agents.https : options.agents.http,
      lookup: options.lookup,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      res.on('end', () => settle(null, res.statusCode ?? 0));
      res.on('error', (err) => settle(err));
      res.on('close', () => settle(new Error('the answer was cut off')));
      res.resume();
    });
    const timer = setTimeout(() => {
      // Settled first: whatever error the destroyed request then reports, the attempt timed out.
      const timeout = new AttemptTimeout(options.timeoutMs);
      settle(timeout);
      req.destroy(timeout);
    }, options.timeoutMs);
    req.on('error', (err) => settle(err));
    req.end(body);
  });
}
