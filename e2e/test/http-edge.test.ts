// Issue "hardening" 5, 7, 9, 10: malformed requests refused by Node's parser answered in the
// error body; the access log after the error renderer, with the status the client got, the
// route template and the request id; a key the upstream refuses is 403 on /status too; dates
// as CFA software sends them.
import { connect } from 'node:net';
import t from 'tap';
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
    socket.on('data', (chunk) => (text += chunk));
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

t.test('requests the HTTP parser refuses get the error body, with 400 or 431', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['a header without a colon', 'GET /health HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 400],
    ['a bad chunked encoding', 'POST /webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400],
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

t.test('the access log shows the status each client got, with method, route template, duration and request id', async (t) => {
  logs.length = 0;
  const calls: Array<[string, string, unknown, number, string | null]> = [
    ['GET', '/sandbox/dossiers', undefined, 400, '/{opcoId}/dossiers'],
    ['GET', '/nowhere/dossiers/etats', undefined, 404, '/{opcoId}/dossiers/etats'],
    ['POST', '/webhooks', { callbackUrl: 'https://example.com/x'.padEnd(5000, 'x'), events: ['job.completed'] }, 413, '/webhooks'],
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
  t.ok(logs.some((l) => JSON.parse(l).status === 403), '403 logged as 403');
  const generated = await service.get('/health', { key: null, headers: { 'x-request-id': 'bad id with spaces' } });
  t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unusable client id is replaced');
});

t.test('GET /{opcoId}/status with a key the upstream refuses is 403 HTTP_ERROR, like every other route', async (t) => {
  const reply = await service.get('/sandbox/status', { key: 'forbidden-key-000' });
  t.equal(reply.status, 403);
  t.equal(reply.body.code, 'HTTP_ERROR');
  t.ok(reply.body.upstream, 'with the upstream body');
  const verdict = await service.get('/sandbox/status');
  t.equal(verdict.status, 200, 'a good key still gets the verdict');
  t.match(verdict.body.status, /^(healthy|degraded)$/, 'degraded after the errors this file provoked');
});

t.test('D31: a dossier dated with ISO timestamps is accepted and sent with the calendar dates written in them', async (t) => {
  const body = dossierBody();
  body.cerfa.contrat.dateDebutContrat = '2025-09-01T12:00:00.000Z';
  body.cerfa.contrat.dateFinContrat = '2027-08-31T00:00:00+02:00';
  body.cerfa.apprenti.dateNaissance = '2005-03-14T23:30:00-05:00';
  const reply = await service.request('POST', '/sandbox/dossiers', { body });
  t.equal(reply.status, 202, reply.text);
  const job = await waitForJob(service, reply.body.statusUrl);
  t.equal(job.status, 'completed');
  const wire = service.sandbox.received.find((r) => (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne)!;
  t.same((wire.json as any).cerfa.contrat.dateDebutContrat, '2025-09-01');
  t.same((wire.json as any).cerfa.contrat.dateFinContrat, '2027-08-31');
  t.same((wire.json as any).cerfa.apprenti.dateNaissance, '2005-03-14');
  const impossible = dossierBody();
  impossible.cerfa.contrat.dateDebutContrat = '2025-02-30T10:00:00Z';
  const refused = await service.request('POST', '/sandbox/dossiers', { body: impossible });
  t.equal(refused.status, 400);
  t.same(refused.body.errors, ['cerfa.contrat.dateDebutContrat: Invalid date']);
});

t.test('the request id goes upstream: with a read, and with each call of the job a submission made, in the worker logs too', async (t) => {
  const readId = `read-${Math.random().toString(36).slice(2, 10)}`;
  const read = await service.get(`/sandbox/dossiers/liste?numerosInternes=DOS-2019-000007`, { headers: { 'x-request-id': readId } });
  t.equal(read.status, 200, read.text);
  const readWire = service.sandbox.received.filter((r) => r.headers['x-request-id'] === readId);
  t.equal(readWire.length, 1, 'the upstream read carried the client request id');

  const jobRequestId = `job-${Math.random().toString(36).slice(2, 10)}`;
  const body = dossierBody();
  const reply = await service.request('POST', '/sandbox/dossiers', { body, headers: { 'x-request-id': jobRequestId } });
  t.equal(reply.status, 202, reply.text);
  const job = await waitForJob(service, reply.body.statusUrl);
  t.equal(job.status, 'completed');
  const wire = service.sandbox.received.find((r) => (r.json as any)?.cerfa?.numeroExterne === body.cerfa.numeroExterne)!;
  t.equal(wire.headers['x-request-id'], jobRequestId, 'the job step carried the submission request id upstream');
  const ended = logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'job ended' && l.jobId === reply.body.jobId);
  t.equal(ended?.requestId, jobRequestId, 'the worker log line names the request id');
});
