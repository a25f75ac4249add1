/**
 * Lingering close, as nginx does it (ngx_http_set_lingering_close). A request refused before its
 * body was read (413 over the limit, 415, 403, 404, 501...) is answered with `Connection: close`,
 * and Node would then end the connection and destroy it as soon as the answer is written. A socket
 * closed with bytes it has not read answers the client's next segment with a TCP reset, and the
 * reset makes the client's side throw away what it had not read yet: a client still writing its
 * body (many write it whole before they read) gets EPIPE or ECONNRESET instead of the answer.
 *
 * So the answer is written, the writing side of the connection closed (the client sees the answer
 * end), and what the client still sends is read and dropped as it comes, never held, until its
 * body is whole or it closes, or LINGER_BYTES or LINGER_MS are reached, whichever comes first; then
 * the connection is closed.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * What the service reads and drops after an answer at most: a body a few MiB over the limit (the
 * usual 413) sent whole before the client reads still gets its answer; past that, the bytes of a
 * client that does not read cost the service more than an answer it would not read anyway.
 */
const LINGER_BYTES = 8 * 1024 * 1024;
/**
 * How long after the answer at most: a client that reads while it writes has the answer within a
 * round trip, one that writes first gets this long to send the rest (nginx waits 5 s for each
 * read, 30 s in all). It also stops a client trickling bytes from holding the connection.
 */
const LINGER_MS = 5_000;

/** The connection of `req`, whose answer says `Connection: close`, closes lingering once it is written. */
export function closeLingering(req: IncomingMessage): void {
  const socket = req.socket;
  // Node ends an answer that closes its connection with `socket.destroySoon()`: end, then destroy
  // once written (_http_server.js, resOnFinish). This socket lingers instead, unless the body has
  // come whole in the meantime: then there is nothing left to read.
  socket.destroySoon = () => {
    if (req.complete) return Socket.prototype.destroySoon.call(socket);
    // The rest of the body goes nowhere: with no 'data' listener it flows and is dropped.
    req.resume();
    linger(socket, req);
  };
}

/**
 * Ends the writing side of `socket` (what was written before is sent first), drops what the peer
 * still sends within the bounds, then destroys it. With `req`, the end of its body ends the wait:
 * what would follow is no longer this request's.
 */
export function linger(socket: Duplex, req?: IncomingMessage): void {
  let dropped = 0;
  let closing = false;
  // Destroyed once the answer has left, which an answer this small does at once unless the client
  // reads nothing at all; the timer destroys it then.
  const close = () => {
    if (closing) return;
    closing = true;
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BYTES) close();
  };
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.on('data', onData);
  req?.once('end', close);
  socket.once('close', () => {
    clearTimeout(timer);
    socket.off('data', onData);
    req?.off('end', close);
  });
  socket.end();
}
