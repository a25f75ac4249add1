/**
 * The HTTP exchange of one attempt: the notification POSTed on its destination's keep-alive agent,
 * every new connection looked up (and checked) by the SSRF guard's `lookup`, no redirect followed
 * (node's client follows none), the answer's body read and dropped. node:http itself, as the
 * bare sender the fan-out is measured against: got's per-request option handling cost more CPU
 * than the rest of the send (bench/RESULTS.md, webhooks).
 *
 * Three deadlines, all counted from the start of the attempt (SPEC 6.3's 10 s is the last): the
 * connection (`connectTimeoutMs`), the answer's status line and headers (`headersTimeoutMs`), the
 * whole answer (`timeoutMs`). A receiver that accepts connections and never answers frees its
 * slot at the second, not the third.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction, Socket } from 'node:net';
import type { Clock, Timer } from '@opco-proxy/core';
import type { DestinationAgents } from './destinations.js';

export class AttemptTimeout extends Error {
  constructor(timeoutMs: number, what = 'no answer') {
    super(`${what} within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

export interface PostOptions {
  agents: DestinationAgents;
  /** The kernel's clock: the deadlines are its timers, so tests move time instead of waiting. */
  clock: Pick<Clock, 'setTimeout'>;
  lookup: LookupFunction;
  /** From the start of the request to the end of the answer. */
  timeoutMs: number;
  /** From the start to a connection (lookup included); a reused connection has one at once. Default `timeoutMs`. */
  connectTimeoutMs?: number;
  /** From the start to the answer's status line and headers. Default `timeoutMs`. */
  headersTimeoutMs?: number;
}

/** The answer's status code, once its body has been read; rejects on a network error or a deadline. */
export function postNotification(
  url: URL,
  body: string,
  headers: Record<string, string>,
  options: PostOptions,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === 'https:';
    const send = https ? httpsRequest : httpRequest;
    const timers: Timer[] = [];
    let settled = false;
    const settle = (err: Error | null, status = 0) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) timer.cancel();
      if (err) reject(err);
      else resolve(status);
    };
    const req = send(
      url,
      {
        method: 'POST',
        agent: https ? options.agents.https : options.agents.http,
        lookup: options.lookup,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        headersTimer?.cancel();
        res.on('end', () => settle(null, res.statusCode ?? 0));
        res.on('error', (err) => settle(err));
        // After 'end' on every answer read whole: the error (and its stack) only for one cut off.
        res.on('close', () => settled || settle(new Error('the answer was cut off')));
        res.resume();
      },
    );
    // Settled first: whatever error the destroyed request then reports, the attempt timed out.
    const deadline = (ms: number, what?: string) => {
      const timer = options.clock.setTimeout(() => {
        const timeout = new AttemptTimeout(ms, what);
        settle(timeout);
        req.destroy(timeout);
      }, ms);
      timers.push(timer);
      return timer;
    };
    deadline(options.timeoutMs);
    // A shorter deadline only when it is shorter: at equal times the whole attempt's says it.
    const earlier = (ms: number | undefined) => ms !== undefined && ms < options.timeoutMs;
    const headersTimer = earlier(options.headersTimeoutMs) ? deadline(options.headersTimeoutMs!) : undefined;
    if (
      earlier(options.connectTimeoutMs) &&
      (!earlier(options.headersTimeoutMs) || options.connectTimeoutMs! < options.headersTimeoutMs!)
    ) {
      const connectTimer = deadline(options.connectTimeoutMs!, 'no connection');
      req.once('socket', (socket: Socket) => {
        if (!socket.connecting) connectTimer.cancel();
        else socket.once('connect', () => connectTimer.cancel());
      });
    }
    req.on('error', (err) => settle(err));
    req.end(body);
  });
}
