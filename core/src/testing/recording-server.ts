/**
 * A real node:http server on a free port that records each request (method, path, headers, body
 * bytes) and lets the test answer it: the upstream, collector or receiver of a plugin's or core's
 * unit tests (`@opco-proxy/core/testing`). The end-to-end suites run the sandbox upstream instead.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** The request target: path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type RecordingAnswer = (request: RecordedRequest, res: ServerResponse) => void;

export interface RecordingServer {
  url: string;
  /** Every request received, in order, recorded before it is answered. */
  received: RecordedRequest[];
  /** Replaces how the next requests are answered. */
  answer(handler: RecordingAnswer): void;
  /** Closes the server and its open connections. */
  close(): Promise<void>;
}

/** Answers JSON with the status given. */
export function answerJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

export async function startRecordingServer(
  handler: RecordingAnswer = (_request, res) => answerJson(res, 200, {}),
): Promise<RecordingServer> {
  const received: RecordedRequest[] = [];
  let current = handler;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method!, path: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      received.push(request);
      current(request, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answer: (next) => void (current = next),
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
