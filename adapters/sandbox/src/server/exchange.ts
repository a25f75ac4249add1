/** Low-level request/response plumbing shared by the token route and the upstream routes. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Body limit well above the proxy's 25 MiB so the sandbox never is the one refusing a payload. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export class BodyTooLarge extends Error {}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A fault or close() may have cut the socket while a handler was still awaiting. */
function gone(res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || res.writableEnded;
}

export function sendRaw(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (gone(res)) return;
  res.writeHead(status, { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendRaw(res, status, 'application/json; charset=utf-8', JSON.stringify(body), headers);
}

/** Error body of the upstream: `{status:'error', message}`. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, { status: 'error', message }, headers);
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** Error body of the classic shape's upstream: `{erreur}`, in French. */
export function sendClassicError(
  res: ServerResponse,
  status: number,
  message: string,
  headers?: Record<string, string>,
): void {
  sendJson(res, status, { erreur: message }, headers);
}
