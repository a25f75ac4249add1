/** A real local webhook receiver that records every request and answers as told. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { hmacSha256Hex, safeEqualHex, systemClock, type Clock } from '@opco-proxy/core';

export interface Received {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

export interface Answer {
  status?: number;
  /** Answer only once this settles: a test holds requests until it says so (never a timer). */
  until?: Promise<unknown>;
  headers?: Record<string, string>;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Answers for the next requests, in order; afterwards `fallback`. */
  script: Answer[];
  fallback: Answer;
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** `clock` stamps what arrives, so a test on a TestClock reads arrival times on its own time line. */
export async function startReceiver(fallback: Answer = { status: 200 }, clock: Clock = systemClock): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const receiver = { received, script: [] as Answer[], fallback } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ at: clock.now(), path: req.url ?? '/', headers: req.headers, raw, body });
      for (const wake of [...waiters]) wake();
      const answer = receiver.script.shift() ?? receiver.fallback;
      const respond = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/plain', ...answer.headers });
        res.end('ok');
      };
      if (answer.until) void answer.until.then(respond, respond);
      else respond();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    port,
    waitFor(count: number, timeoutMs = 15_000) {
      return new Promise<Received[]>((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received.slice(0, count));
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${received.length} of ${count} requests in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
    },
  });
  return receiver;
}

/** What a receiver does (docs/webhooks.md): HMAC of the raw body, compared in constant time. */
export function signatureValid(secret: string, request: Received): boolean {
  return safeEqualHex(hmacSha256Hex(secret, request.raw), String(request.headers['svc-signature'] ?? ''));
}
