/**
 * A tiny local upstream that answers what it is told to: the recorded answer of a fixture, and
 * the recorded token answer at `/token`. It keeps what it received, so the kit can check the
 * requests the profile makes. The real upstream client and pipeline talk to it over HTTP, so the
 * kit checks what the service does, not a re-implementation of it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fixture } from './fixtures.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The JSON body of a JSON request. */
  json?: unknown;
  /** The parts of a multipart request: text for fields and file parts alike. */
  parts?: Array<{ name: string; filename?: string; text: string }>;
}

export interface FixtureUpstream {
  url: string;
  tokenUrl: string;
  /** The answer to the next calls (every call but the token's). */
  answer: Fixture | undefined;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

const NO_ANSWER: Pick<Fixture, 'status' | 'headers' | 'text'> = { status: 200, headers: {}, text: '{}' };

export async function startFixtureUpstream(token: Fixture | undefined): Promise<FixtureUpstream> {
  const upstream = { answer: undefined as Fixture | undefined, received: [] as ReceivedRequest[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://upstream');
      const isToken = url.pathname === '/token';
      const answer = isToken
        ? (token ?? { status: 404, headers: {}, text: '{"error":"no fixtures/auth/token.json"}' })
        : (upstream.answer ?? NO_ANSWER);
      const reply = () => {
        res.writeHead(answer.status, {
          'content-type': isJson(answer.text) ? 'application/json' : 'text/plain',
          ...answer.headers,
        });
        res.end(answer.text);
      };
      if (isToken) return reply();
      received(req, url, Buffer.concat(chunks)).then(
        (request) => {
          upstream.received.push(request);
          reply();
        },
        () => reply(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return Object.assign(upstream, {
    url,
    tokenUrl: `${url}/token`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

async function received(req: IncomingMessage, url: URL, body: Buffer): Promise<ReceivedRequest> {
  const request: ReceivedRequest = {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
  };
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('application/json') && body.length > 0) {
    try {
      request.json = JSON.parse(body.toString('utf8'));
    } catch {
      request.json = body.toString('utf8');
    }
  } else if (type.startsWith('multipart/form-data')) {
    // The platform's own multipart parser: what a server would read.
    const form = await new Request('http://upstream/', {
      method: 'POST',
      headers: { 'content-type': type },
      body,
    }).formData();
    request.parts = [];
    for (const [name, value] of form.entries()) {
      if (typeof value === 'string') request.parts.push({ name, text: value });
      else request.parts.push({ name, filename: value.name, text: await value.text() });
    }
  }
  return request;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
