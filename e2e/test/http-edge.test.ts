// Issue "hardening" 5, 7, 9, 10: malformed requests refused by Node's parser answered in the
// error body; the access log after the error renderer, with the status the client got, the
// route template and the request id; a key the upstream refuses is 403 on /status too; dates
// as CFA software sends them. Issue "Every HTTP answer told right": a method no route takes is
// 501 in the error body; a body refused before it was read still lets its client read the answer
// (lingering close), within bounds.
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { fetch as undiciFetch } from 'undici';
import { startService, dossierBody, waitForJob, KEY_A } from '../src/index.js';

const logs: string[] = [];
const service = await startService({ logs, config: { limits: { bodyBytes: 4096, fileBytes: 1024 } } });
t.teardown(() => service.close());

/** Sends raw bytes and reads the whole answer (the connection is closed by the service). */
function raw(request: string): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(service.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
      resolve({ status: Number(head.split(' ')[1]), headers: head, body: parsed });
    });
    socket.end(request);
  });
}

const MiB = 1024 * 1024;

/**
 * Whether a connection the service should close lingering does close: generous, the bounds are a
 * few MiB and a few seconds, and a connection read forever never closes.
 */
function cutOff(closed: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    closed.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(resolve, 60_000, false).unref()),
  ]);
}

/**
 * A connection to the service, and everything it has answered so far. Half-open allowed: the
 * client does not stop sending when the service ends its side, only when the service closes.
 */
function connection(): { socket: Socket; answer: () => string; closed: Promise<unknown> } {
  const { hostname, port } = new URL(service.url);
  const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
  let text = '';
  socket.on('data', (chunk) => (text += chunk.toString()));
  // A write refused once the service has closed: the test looks at what was answered.
  socket.on('error', () => undefined);
  return { socket, answer: () => text, closed: new Promise((resolve) => socket.once('close', resolve)) };
}

t.test('requests the HTTP parser refuses get the error body, with 400 or 431', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 400],
    [
      'a bad chunked encoding',
      'POST /webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      400,
    ],
    ['an unknown method', 'BREW /health HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['headers over the size limit', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['not HTTP at all', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n', 400],
  ];
  for (const [what, request, status] of cases) {
    const answer = await raw(request);
    t.equal(answer.status, status, what);
    t.match(answer.body, { status: 'error', code: 'VALIDATION_ERROR' }, `${what}: the error body`);
    t.ok(answer.body?.errors?.length >= 1, `${what}: errors say why`);
    t.match(answer.headers, /Svc-Api-Version: 1/);
  }
  t.equal((await service.get('/health', { key: null })).status, 200, 'still serving');
});

t.test('a method Node knows but no route takes is 501 NOT_SUPPORTED in the error body, on any path', async (t) => {
  const allows: Array<[string, string[] | undefined]> = [
    ['/health', ['GET', 'HEAD']],
    ['/webhooks', ['GET', 'HEAD', 'POST']],
    ['/nowhere/at/all', undefined],
  ];
  for (const method of ['TRACE', 'PROPFIND', 'M-SEARCH', 'MKCOL', 'PURGE', 'SEARCH', 'QUERY']) {
    for (const [path, allow] of allows) {
      const what = `${method} ${path}`;
      const answer = await raw(`${method} ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: odd-method-1\r\n\r\n`);
      t.equal(answer.status, 501, what);
      t.same(
        answer.body,
        {
          status: 'error',
          code: 'NOT_SUPPORTED',
          description: `the HTTP method ${method} is not supported by this service`,
        },
        `${what}: the error body`,
      );
      t.match(answer.headers, /\r\nContent-Type: application\/json; charset=utf-8\r\n/, `${what}: JSON`);
      t.match(answer.headers, /\r\nSvc-Api-Version: 1\r\n/, `${what}: Svc-Api-Version`);
      t.match(answer.headers, /\r\nX-Request-Id: odd-method-1\r\n/, `${what}: the request id`);
      // The methods the path takes, when it is one; an unknown path gets no empty Allow.
      t.same(/\r\nAllow: ([^\r]*)/.exec(answer.headers)?.[1].split(', ').sort(), allow, `${what}: Allow`);
    }
  }
  const refused = await raw(
    `PROPFIND /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/xml\r\nContent-Length: 5\r\n\r\n<a/>\n`,
  );
  t.equal(refused.status, 501, 'with a body too');
  t.equal(refused.body?.code, 'NOT_SUPPORTED');
});

t.test(
  'CONNECT is 501 NOT_SUPPORTED in the error body too, and a client that keeps sending after it is cut off',
  async (t) => {
    const answer = await raw(
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nX-Request-Id: tunnel-1\r\n\r\n',
    );
    t.equal(answer.status, 501);
    t.same(answer.body, {
      status: 'error',
      code: 'NOT_SUPPORTED',
      description: 'the HTTP method CONNECT is not supported by this service',
    });
    t.match(answer.headers, /\r\nSvc-Api-Version: 1\r\n/);
    t.match(answer.headers, /\r\nX-Request-Id: tunnel-1\r\n/);
    // Node stops watching a CONNECT's connection: only the lingering bounds end it.
    const tunnel = connection();
    tunnel.socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const dripping = setInterval(() => tunnel.socket.destroyed || tunnel.socket.write('x'), 100);
    t.teardown(() => clearInterval(dripping));
    t.ok(await cutOff(tunnel.closed), 'the connection closed');
    t.match(tunnel.answer(), /^HTTP\/1\.1 501 /, 'after the 501');
  },
);

t.test('HEAD and OPTIONS answer as before', async (t) => {
  const head = await raw('HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal(head.status, 200, 'HEAD /health');
  t.match(head.headers, /\r\nContent-Length: 15\r\n/, 'the length of what GET answers');
  t.equal(head.body, undefined, 'and no body');
  t.equal((await raw('HEAD /nowhere HTTP/1.1\r\nHost: x\r\n\r\n')).status, 404, 'HEAD of an unknown path');
  const options = await raw('OPTIONS /webhooks HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal(options.status, 204, 'OPTIONS of a known path');
  t.same(
    /\r\nAllow: ([^\r]*)/.exec(options.headers)?.[1].split(', ').sort(),
    ['GET', 'HEAD', 'POST'],
    'and the methods it takes',
  );
  const unknown = await raw('OPTIONS /nowhere HTTP/1.1\r\nHost: x\r\n\r\n');
  t.equal(unknown.status, 404, 'OPTIONS of an unknown path');
  t.equal(unknown.body?.code, 'NOT_FOUND');
});

t.test(
  'the access log shows the status each client got, with method, route template, duration and request id',
  async (t) => {
    logs.length = 0;
    const calls: Array<[string, string, unknown, number, string | null]> = [
      ['GET', '/sandbox/dossiers', undefined, 400, '/{opcoId}/dossiers'],
      ['GET', '/nowhere/dossiers/etats', undefined, 404, '/{opcoId}/dossiers/etats'],
      [
        'POST',
        '/webhooks',
        { callbackUrl: 'https://example.com/x'.padEnd(5000, 'x'), events: ['job.completed'] },
        413,
        '/webhooks',
      ],
      ['PUT', '/webhooks', undefined, 405, null],
      ['GET', '/sandbox/cfakeyinfo?siren=123456789&XAPIKEY=k', undefined, 200, '/{opcoId}/cfakeyinfo'],
    ];
    for (const [method, path, body, status, route] of calls) {
      const requestId = `req-${status}-${Math.random().toString(36).slice(2, 8)}`;
      const reply = await service.request(method, path, { body, headers: { 'x-request-id': requestId } });
      t.equal(reply.status, status, `${method} ${path}`);
      t.equal(reply.headers.get('x-request-id'), requestId, 'the client request id is echoed');
      const line = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.requestId === requestId);
      t.ok(line, `logged ${requestId}`);
      t.equal(line?.status, status, `the log says ${status}`);
      t.equal(line?.method, method);
      t.equal(line?.route, route);
      t.type(line?.ms, 'number');
      t.equal(line?.apiKey, `${KEY_A.slice(0, 4)}****`, 'key masked');
    }
    const forbidden = await service.get('/sandbox/dossiers/etats', { key: null });
    t.equal(forbidden.status, 403);
    t.ok(
      logs.some((l) => JSON.parse(l).status === 403),
      '403 logged as 403',
    );
    const generated = await service.get('/health', { key: null, headers: { 'x-request-id': 'bad id with spaces' } });
    t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unusable client id is replaced');
  },
);

t.test('GET /{opcoId}/status with a key the upstream refuses is 403 HTTP_ERROR, like every other route', async (t) => {
  const reply = await service.get('/sandbox/status', { key: 'forbidden-key-000' });
  t.equal(reply.status, 403);
  t.equal(reply.body.code, 'HTTP_ERROR');
  t.ok(reply.body.upstream, 'with the upstream body');
  const verdict = await service.get('/sandbox/status');
  t.equal(verdict.status, 200, 'a good key still gets the verdict');
  t.match(verdict.body.status, /^(healthy|degraded)$/, 'degraded after the errors this file provoked');
});

t.test(
  'D31: a dossier dated with ISO timestamps is accepted and sent with the calendar dates written in them',
  async (t) => {
    const body = dossierBody();
    body.cerfa.contrat.dateDebutContrat = '2025-09-01T12:00:00.000Z';
    body.cerfa.contrat.dateFinContrat = '2027-08-31T00:00:00+02:00';
    body.cerfa.apprenti.dateNaissance = '2005-03-14T23:30:00-05:00';
    const reply = await service.request('POST', '/sandbox/dossiers', { body });
    t.equal(reply.status, 202, reply.text);
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed');
    const wire = service.sandbox.received.find(
      (r) => (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    )!;
    t.same((wire.json as any).cerfa.contrat.dateDebutContrat, '2025-09-01');
    t.same((wire.json as any).cerfa.contrat.dateFinContrat, '2027-08-31');
    t.same((wire.json as any).cerfa.apprenti.dateNaissance, '2005-03-14');
    const impossible = dossierBody();
    impossible.cerfa.contrat.dateDebutContrat = '2025-02-30T10:00:00Z';
    const refused = await service.request('POST', '/sandbox/dossiers', { body: impossible });
    t.equal(refused.status, 400);
    t.same(refused.body.errors, ['cerfa.contrat.dateDebutContrat: Invalid date']);
  },
);

t.test(
  'the request id goes upstream: with a read, and with each call of the job a submission made, in the worker logs too',
  async (t) => {
    const readId = `read-${Math.random().toString(36).slice(2, 10)}`;
    const read = await service.get(`/sandbox/dossiers/liste?numerosInternes=DOS-2019-000007`, {
      headers: { 'x-request-id': readId },
    });
    t.equal(read.status, 200, read.text);
    const readWire = service.sandbox.received.filter((r) => r.headers['x-request-id'] === readId);
    t.equal(readWire.length, 1, 'the upstream read carried the client request id');

    const jobRequestId = `job-${Math.random().toString(36).slice(2, 10)}`;
    const body = dossierBody();
    const reply = await service.request('POST', '/sandbox/dossiers', {
      body,
      headers: { 'x-request-id': jobRequestId },
    });
    t.equal(reply.status, 202, reply.text);
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed');
    const wire = service.sandbox.received.find(
      (r) => (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne,
    )!;
    t.equal(wire.headers['x-request-id'], jobRequestId, 'the job step carried the submission request id upstream');
    const ended = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'job ended' && l.jobId === reply.body.jobId);
    t.equal(ended?.requestId, jobRequestId, 'the worker log line names the request id');
  },
);

t.test('a body over the limit sent with fetch gets the 413 and its error body', async (t) => {
  for (const body of [
    Buffer.alloc(2 * MiB, 0x20),
    JSON.stringify({ callbackUrl: `https://example.com/${'x'.repeat(2 * MiB)}`, events: ['job.completed'] }),
  ]) {
    const reply = await undiciFetch(`${service.url}/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A },
      body,
    });
    t.equal(reply.status, 413);
    t.same(await reply.json(), {
      status: 'error',
      code: 'PAYLOAD_TOO_LARGE',
      description: 'request body is over the 4096-byte limit',
    });
    t.equal(reply.headers.get('svc-api-version'), '1');
  }
});

t.test('a client that writes its whole refused body before it reads still reads the answer', async (t) => {
  const body = Buffer.alloc(2 * MiB, 0x20);
  const cases: Array<[string, string, number]> = [
    [
      'announced over the limit',
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      413,
    ],
    [
      'found over the limit as it came',
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${KEY_A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n`,
      413,
    ],
    [
      'not JSON',
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${KEY_A}\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n`,
      415,
    ],
    [
      'without a key',
      `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      403,
    ],
    [
      'on a path that takes no POST',
      `POST /health HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      405,
    ],
  ];
  const piece = 64 * 1024;
  for (const [what, head, status] of cases) {
    const { hostname, port } = new URL(service.url);
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    socket.on('error', () => undefined);
    // The service has said all it will (its end of the connection), or the connection is gone.
    const over = new Promise((resolve) => socket.once('end', resolve).once('close', resolve));
    const write = (bytes: Buffer | string) =>
      new Promise<boolean>((resolve) => socket.write(bytes, (err) => resolve(!err)));
    await write(head);
    await write(body.subarray(0, piece));
    // The answer has come (on the headers, or on the first bytes over the limit) and is left
    // unread while the rest of the body is written, as a client that writes first does; a write
    // the service refuses with a reset makes the client drop it.
    await new Promise((resolve) => socket.once('readable', resolve));
    let taken = true;
    for (let offset = piece; offset < body.length && taken; offset += piece)
      taken = await write(body.subarray(offset, offset + piece));
    if (taken && head.includes('chunked')) taken = await write('\r\n0\r\n\r\n');
    t.ok(taken, `${what}: the whole body was taken, not refused with a reset`);
    let answer = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk));
    await over;
    socket.destroy();
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `${what}: ${status}`);
    t.match(answer, /\r\nConnection: close\r\n/, `${what}: the connection closes after the answer`);
    t.match(answer.split('\r\n\r\n')[1], /^\{"status":"error","code":"[A-Z_]+"/, `${what}: the error body`);
  }
});

t.test('a client that goes on sending after a refused body is cut off, not read forever', async (t) => {
  // Fast: far more than the service reads after an answer.
  const flood = connection();
  flood.socket.write(
    `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${KEY_A}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  );
  const chunk = Buffer.concat([
    Buffer.from(`${(64 * 1024).toString(16)}\r\n`),
    Buffer.alloc(64 * 1024, 0x20),
    Buffer.from('\r\n'),
  ]);
  let sent = 0;
  let ended = false;
  void flood.closed.then(() => (ended = true));
  const endless = (async () => {
    while (!ended && !flood.socket.destroyed) {
      sent += chunk.length;
      if (!flood.socket.write(chunk))
        await new Promise((resolve) => flood.socket.once('drain', resolve).once('close', resolve));
    }
  })();
  // Slow: a byte now and then, for longer than the service waits after an answer.
  const trickle = connection();
  trickle.socket.write(
    `POST /webhooks HTTP/1.1\r\nHost: x\r\nX-API-KEY: ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: ${100 * MiB}\r\n\r\n`,
  );
  const dripping = setInterval(() => trickle.socket.destroyed || trickle.socket.write(' '), 100);
  t.teardown(() => clearInterval(dripping));
  const floodCut = await cutOff(flood.closed);
  ended = true;
  await endless;
  t.ok(floodCut, 'an endless body: the connection closed');
  t.match(flood.answer(), /^HTTP\/1\.1 413 /, 'after the 413');
  t.ok(sent < 64 * MiB, `and the service stopped reading (${(sent / MiB).toFixed(1)} MiB sent)`);
  t.ok(await cutOff(trickle.closed), 'a trickling body: the connection closed');
  t.match(trickle.answer(), /^HTTP\/1\.1 413 /, 'after the 413');
  t.equal((await service.get('/health', { key: null })).status, 200, 'still serving');
});
