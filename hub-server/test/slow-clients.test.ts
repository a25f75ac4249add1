// The hub's HTTP server is bounded as the API's is (issue 38 point 6): Node's timeouts, the
// slow-body watch and the per-address connection cap, at the API's defaults. An address holding
// 64 connections has its 65th refused 429 at once while another address is served; a body that
// stops arriving is answered 408 within the body watch's 10 s.
import t from 'tap';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { SERVER_LIMITS } from '@opco-proxy/core/application';
import { ADMIN_KEY, startTestHub } from './fixtures/hub-harness.js';

function open(url: string, from: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port), localAddress: from });
  socket.setEncoding('latin1');
  return once(socket, 'connect').then(() => socket);
}

/** The status line the server sends on `socket`, or 'closed' if it closes without one. */
function statusLine(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n')) resolve(text.slice(0, text.indexOf('\r\n')));
    });
    socket.on('close', () => resolve(text ? text.slice(0, text.indexOf('\r\n')) : 'closed'));
  });
}

t.test('the hub refuses an address its 65th connection, and serves another', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const held = await Promise.all(
    Array.from({ length: SERVER_LIMITS.maxConnectionsPerAddress }, () => open(hub.url, '127.0.0.3')),
  );
  t.teardown(() => held.forEach((socket) => socket.destroy()));
  const extra = await open(hub.url, '127.0.0.3');
  const answer = statusLine(extra);
  extra.write('GET /health HTTP/1.1\r\nHost: hub\r\n\r\n');
  t.equal(
    await answer,
    'HTTP/1.1 429 Too Many Requests',
    `the ${SERVER_LIMITS.maxConnectionsPerAddress + 1}th connection of 127.0.0.3 is refused`,
  );
  extra.destroy();
  const elsewhere = await fetch(`${hub.url}/health`);
  t.equal(elsewhere.status, 200, '127.0.0.1 is served meanwhile');
});

t.test('a body that stops arriving is answered 408 and closed', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const socket = await open(hub.url, '127.0.0.4');
  t.teardown(() => socket.destroy());
  const answer = statusLine(socket);
  const started = Date.now();
  socket.write(
    `POST /admin/keys HTTP/1.1\r\nHost: hub\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"fleetId":`,
  );
  t.equal(await answer, 'HTTP/1.1 408 Request Timeout');
  const ms = Date.now() - started;
  t.ok(
    ms < SERVER_LIMITS.requestTimeoutMs,
    `answered after ${ms} ms, by the body watch, not the request timeout (${SERVER_LIMITS.requestTimeoutMs} ms)`,
  );
});
