/**
 * Requests Node's HTTP parser refuses before any middleware runs (a malformed header, a bad
 * chunked encoding, an unknown method, headers over the size limit) are answered here, in the
 * error body of SPEC 7 like every other answer, instead of Node's bare 400 with no body. So is
 * CONNECT, which Node hands to a `connect` listener instead of the middleware, and without one
 * cuts without a word.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { API_VERSION } from '@opco-proxy/schemas';
import { createError, toErrorBody, type ServiceError } from '../errors/errors.js';
import { linger } from './lingering-close.js';
import { requestIdentity } from './request-context.js';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
};

/** The error body of a request Node's parser or timeouts refused (`code`: the error's). */
export function clientRequestError(code: string | undefined): ServiceError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    const message = 'request headers are over the size limit';
    return createError('VALIDATION_ERROR', message, { status: 431, errors: [`headers: ${message}`] });
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return createError('VALIDATION_ERROR', 'the request was not received in time', {
      status: 408,
      errors: ['request: not received in time'],
    });
  }
  const what =
    code === 'HPE_INVALID_METHOD'
      ? 'unknown HTTP method'
      : code === 'HPE_INVALID_CHUNK_SIZE'
        ? 'invalid chunked encoding'
        : 'malformed HTTP request';
  return createError('VALIDATION_ERROR', what, { errors: [`request: ${what}${code ? ` (${code})` : ''}`] });
}

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or a socket already answered has nobody left to read an answer.
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    socket.end(answer(clientRequestError(err.code)));
  });
  // The service is no proxy for tunnels. The request got this far, so it has an id to echo; what
  // the client sends after it is dropped, within lingering-close.ts's bounds (Node no longer
  // watches the connection: its timeouts do not apply).
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    // A reset while lingering has nobody to tell.
    socket.on('error', () => socket.destroy());
    socket.write(
      answer(
        createError('NOT_SUPPORTED', 'the HTTP method CONNECT is not supported by this service'),
        `X-Request-Id: ${requestIdentity(req.headers).requestId}\r\n`,
      ),
    );
    linger(socket);
  });
}

function answer(error: ServiceError, headers = ''): string {
  const body = JSON.stringify(toErrorBody(error));
  return (
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Bad Request'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `Svc-Api-Version: ${API_VERSION}\r\n` +
    headers +
    'Connection: close\r\n\r\n' +
    body
  );
}
