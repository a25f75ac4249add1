// Pipeline step 6 (SPEC 1.1, 7; D5, D8, D10): what the upstream client sends (headers, JSON,
// multipart) and how every answer and failure comes back, against a real node:http upstream.
import t, { type Test } from 'tap';
import { AuthRefreshNeeded, ServiceError, UpstreamClient, type UpstreamAuth } from '../src/application.js';
import { oauthClientCredentials, systemClock } from '../src/index.js';
import { callContext, inlineOpco } from './fixtures/inline-profile.js';
import { answerJson, startRecordingServer, type RecordingAnswer } from '../src/testing/recording-server.js';

const PUBLISHER = { editeur: 'Ed', logiciel: 'Log', version: '9.9' };
const ROUTES = {
  'GET /dossiers/etats': { upstream: '/v2/etats' },
  'POST /dossiers': { upstream: '/v2/dossiers' },
  'POST /factures': { upstream: '/v2/factures', multipart: 'facture' },
};

/** An authentication that sends a bearer token and says whether a 401 deserves a refresh. */
function bearer(refusable = false): UpstreamAuth {
  return { headers: async () => ({ authorization: 'Bearer tok' }), refused: () => refusable };
}

async function setup(
  t: Test,
  answer?: RecordingAnswer,
  options: { timeoutMs?: number; maxAnswerBytes?: number; refusable?: boolean; errors?: never[] } = {},
) {
  const upstream = await startRecordingServer(answer);
  const client = new UpstreamClient({
    publisher: PUBLISHER,
    timeoutMs: options.timeoutMs ?? 5000,
    maxAnswerBytes: options.maxAnswerBytes ?? 1 << 20,
  });
  t.teardown(async () => {
    await client.close();
    await upstream.close();
  });
  const opco = inlineOpco(upstream.url, ROUTES, { errors: options.errors });
  client.authenticate(opco.id, bearer(options.refusable));
  return { upstream, client, opco };
}

/** The ServiceError a call ends with, or a failure when it answers. */
async function failure(t: Test, call: Promise<unknown>): Promise<ServiceError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof ServiceError, `a ServiceError (${String(err)})`);
  return err as ServiceError;
}

t.test('a GET carries the query and the headers of SPEC 1.1; lease and hook headers override', async (t) => {
  const { upstream, client, opco } = await setup(t, (_req, res) =>
    answerJson(res, 200, { items: [1] }, { 'x-up': 'u' }),
  );
  const ctx = callContext(opco, 'GET /dossiers/etats', {
    query: { numeroPage: '2', etat: 'a b' },
    requestId: 'req-42',
    leaseHeaders: { 'Svc-Hub-Token': 'grant' },
    upstreamHeaders: { Authorization: 'Bearer from-hook' },
  });
  const answer = await client.call(ctx);
  t.same(answer.body, { items: [1] });
  t.equal(answer.status, 200);
  t.equal(answer.headers['x-up'], 'u', 'the upstream headers come back');
  const [sent] = upstream.received;
  t.equal(sent.method, 'GET');
  t.equal(sent.path, '/v2/etats?numeroPage=2&etat=a+b');
  t.match(sent.headers, {
    'x-api-key': 'cfa-key',
    editeur: 'Ed',
    logiciel: 'Log',
    version: '9.9',
    accept: 'application/json',
    'x-request-id': 'req-42',
    'svc-hub-token': 'grant',
    authorization: 'Bearer from-hook',
  });
  t.equal(sent.body.length, 0, 'no body');
});

t.test(
  "a GET's URL: the base URL's path, the route's own query, then the call's, as URL.searchParams writes them",
  async (t) => {
    const { upstream, client } = await setup(t);
    const opco = inlineOpco(`${upstream.url}/base//`, { 'GET /dossiers/etats': { upstream: '/v2/etats?fixe=1' } });
    client.authenticate(opco.id, bearer());
    // What the URL parser makes of each, as the client did for every call before it kept the route's URL.
    const expected = (query: Record<string, string>) => {
      const url = new URL(`${upstream.url}/base/v2/etats?fixe=1`);
      for (const [name, value] of Object.entries(query)) url.searchParams.append(name, value);
      return url.pathname + url.search;
    };
    const queries: Record<string, string>[] = [
      { numeroPage: '2', etat: 'a b' },
      { q: 'x&y=z', accent: 'éçà', plus: '1+1', slash: 'a/b?c#d' },
      {},
      { numeroPage: '3' },
    ];
    for (const query of queries) await client.call(callContext(opco, 'GET /dossiers/etats', { query }));
    t.same(
      upstream.received.map((r) => r.path),
      queries.map(expected),
    );
    t.equal(
      upstream.received[1].path,
      '/base/v2/etats?fixe=1&q=x%26y%3Dz&accent=%C3%A9%C3%A7%C3%A0&plus=1%2B1&slash=a%2Fb%3Fc%23d',
    );
    t.equal(upstream.received[2].path, '/base/v2/etats?fixe=1', "no query of its own: the route's alone");
  },
);

t.test("without a request id, none is sent; the authentication header is the strategy's", async (t) => {
  const { upstream, client, opco } = await setup(t);
  await client.call(callContext(opco, 'GET /dossiers/etats'));
  t.notOk('x-request-id' in upstream.received[0].headers);
  t.equal(upstream.received[0].headers.authorization, 'Bearer tok');
});

t.test('a POST sends its body as JSON', async (t) => {
  const { upstream, client, opco } = await setup(t, (_req, res) => answerJson(res, 201, { id: 'd1' }));
  const answer = await client.call(callContext(opco, 'POST /dossiers', { body: { siret: '123', n: [1, 2] } }));
  t.same(answer, { status: 201, body: { id: 'd1' }, headers: answer.headers });
  const [sent] = upstream.received;
  t.equal(sent.headers['content-type'], 'application/json');
  t.same(JSON.parse(sent.body.toString()), { siret: '123', n: [1, 2] });
});

t.test('a multipart POST: the metadata part, then one `fichier` part per file, as sent', async (t) => {
  const { upstream, client, opco } = await setup(t, (_req, res) => answerJson(res, 200, { ok: true }));
  const pdf = Buffer.from('%PDF-1.4 facture');
  const bytes = Buffer.from([0, 1, 2, 255]);
  await client.call(
    callContext(opco, 'POST /factures', {
      body: { montant: 12 },
      files: { facture: [pdf.subarray(0, 5), pdf.subarray(5)], annexe: bytes },
    }),
  );
  const [sent] = upstream.received;
  const type = String(sent.headers['content-type']);
  const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(type)?.[1];
  t.ok(boundary, type);
  t.equal(Number(sent.headers['content-length']), sent.body.length, 'Content-Length is what was sent');
  const parts = sent.body.toString('latin1').split(`--${boundary}`);
  t.equal(parts.at(-1), '--\r\n', 'the closing boundary ends the body');
  const [metadata, first, second] = parts.slice(1, -1).map((part) => {
    const [head, content] = part.split('\r\n\r\n');
    return { head: head, content: content.slice(0, -2) };
  });
  t.match(metadata.head, 'name="facture"; filename="blob"\r\nContent-Type: application/json');
  t.same(JSON.parse(metadata.content), { montant: 12 });
  t.match(first.head, 'name="fichier"; filename="facture.pdf"\r\nContent-Type: application/pdf');
  t.equal(first.content, pdf.toString('latin1'), 'the pieces of a file are joined on the wire');
  t.match(second.head, 'name="fichier"; filename="annexe.bin"\r\nContent-Type: application/octet-stream');
  t.same(Buffer.from(second.content, 'latin1'), bytes);
});

t.test('an upstream that does not answer in time: 504 TIMEOUT', async (t) => {
  const { client, opco } = await setup(t, () => undefined, { timeoutMs: 150 });
  const err = await failure(t, client.call(callContext(opco, 'GET /dossiers/etats')));
  t.match(err, { code: 'TIMEOUT', status: 504, retryable: true });
});

t.test('a body that stops half-way is a timeout too', async (t) => {
  const { client, opco } = await setup(
    t,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items": [');
    },
    { timeoutMs: 200 },
  );
  t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), { code: 'TIMEOUT' });
});

t.test("a body that drips never idles, yet the call's whole deadline cuts it (CallDeadline)", async (t) => {
  let drip: NodeJS.Timeout | undefined;
  t.teardown(() => clearInterval(drip));
  const { client, opco } = await setup(
    t,
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      drip = setInterval(() => res.write('0,'), 20);
    },
    { timeoutMs: 300 },
  );
  t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), {
    code: 'TIMEOUT',
    status: 504,
    message: /did not answer GET \/dossiers\/etats within the time limit/,
  });
});

t.test('an upstream that cannot be reached: 502 NETWORK_ERROR', async (t) => {
  const { upstream, client, opco } = await setup(t);
  await upstream.close();
  t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), {
    code: 'NETWORK_ERROR',
    status: 502,
  });
});

t.test(
  'closed, the client fails a call as a network error and sends nothing (undici is loaded at the first call)',
  async (t) => {
    const { upstream, client, opco } = await setup(t);
    await client.call(callContext(opco, 'GET /dossiers/etats'));
    await client.close();
    t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), {
      code: 'NETWORK_ERROR',
      status: 502,
    });
    t.equal(upstream.received.length, 1, 'only the call made before the close reached the upstream');
    const unused = new UpstreamClient({ publisher: PUBLISHER, timeoutMs: 1000, maxAnswerBytes: 1000 });
    await unused.close();
    t.pass('a client that never called (no pool made) closes, and closing twice is harmless');
    await unused.close();
  },
);

t.test('answers over maxAnswerBytes are unusable, whether declared or streamed', async (t) => {
  const big = JSON.stringify({ data: 'x'.repeat(2000) });
  const { upstream, client, opco } = await setup(t, (_req, res) => answerJson(res, 200, JSON.parse(big)), {
    maxAnswerBytes: 1000,
  });
  t.match(
    await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))),
    { code: 'UPSTREAM_INVALID_RESPONSE', status: 502 },
    'Content-Length over the limit',
  );
  upstream.answer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.write(big.slice(0, 600));
    setTimeout(() => res.end(big.slice(600)), 20);
  });
  t.match(
    await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))),
    { code: 'UPSTREAM_INVALID_RESPONSE' },
    'chunks over the limit',
  );
  upstream.answer((_req, res) => answerJson(res, 200, { data: 'x'.repeat(900) }));
  t.equal(
    ((await client.call(callContext(opco, 'GET /dossiers/etats'))).body as { data: string }).data.length,
    900,
    'an answer under the limit passes',
  );
});

t.test('a 2xx that is not JSON, or too deep, is unusable; an empty one is null', async (t) => {
  const { upstream, client, opco } = await setup(t, (_req, res) => res.end('<html>'));
  const notJson = await failure(t, client.call(callContext(opco, 'GET /dossiers/etats')));
  t.match(notJson, { code: 'UPSTREAM_INVALID_RESPONSE', upstream: '<html>' });
  upstream.answer((_req, res) => res.end('['.repeat(100) + ']'.repeat(100)));
  t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), {
    code: 'UPSTREAM_INVALID_RESPONSE',
  });
  upstream.answer((_req, res) => res.writeHead(204).end());
  t.match(
    await client.call(callContext(opco, 'GET /dossiers/etats')),
    { status: 204, body: null },
    'as the answer said',
  );
});

t.test('error answers map onto the table of SPEC 7', async (t) => {
  let status = 0;
  let headers: Record<string, string> = {};
  const { client, opco } = await setup(t, (_req, res) =>
    answerJson(res, status, { message: `said ${status}` }, headers),
  );
  const cases: Array<[number, Record<string, string>, object]> = [
    [401, {}, { code: 'HTTP_ERROR', status: 403, upstreamStatus: 401 }],
    [403, {}, { code: 'HTTP_ERROR', status: 403, upstreamStatus: 403 }],
    [404, {}, { code: 'NOT_FOUND', status: 404 }],
    [400, {}, { code: 'UPSTREAM_ERROR', status: 400, retryable: false }],
    [500, {}, { code: 'UPSTREAM_ERROR', status: 500, retryable: true }],
    [429, {}, { code: 'UPSTREAM_ERROR', status: 429, headers: { 'Retry-After': '1' } }],
    [429, { 'retry-after': '7' }, { code: 'UPSTREAM_ERROR', status: 429, headers: { 'Retry-After': '7' } }],
    [503, { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, { code: 'UPSTREAM_ERROR', status: 503, headers: {} }],
    [302, {}, { code: 'UPSTREAM_ERROR', status: 502, upstreamStatus: 302 }],
  ];
  for (const [answered, extra, expected] of cases) {
    status = answered;
    headers = extra;
    const err = await failure(t, client.call(callContext(opco, 'GET /dossiers/etats')));
    t.match(
      err,
      { ...expected, upstream: { message: `said ${answered}` } },
      `upstream ${answered} ${JSON.stringify(extra)}`,
    );
  }
});

t.test("the profile's error rules come first: status, body and routes must match", async (t) => {
  const errors = [
    {
      status: 400,
      body: /inconnu/,
      routes: ['GET /dossiers/etats'],
      code: 'NOT_FOUND',
      description: 'no such dossier',
    },
    { status: 400, code: 'VALIDATION_ERROR', description: 'refused' },
    { status: 418, code: 'UPSTREAM_ERROR' },
  ] as never[];
  let status = 400;
  let text = 'Dossier inconnu';
  const { client, opco } = await setup(t, (_req, res) => res.writeHead(status).end(text), { errors });
  t.match(await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))), {
    code: 'NOT_FOUND',
    message: 'no such dossier',
    upstream: 'Dossier inconnu',
  });
  t.match(
    await failure(t, client.call(callContext(opco, 'POST /dossiers', { body: {} }))),
    { code: 'VALIDATION_ERROR', errors: ['upstream: refused'] },
    'on another route, the next rule',
  );
  text = 'champ manquant';
  t.match(
    await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))),
    { code: 'VALIDATION_ERROR', status: 400 },
    'another body, the next rule',
  );
  status = 418;
  t.match(
    await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'))),
    { code: 'UPSTREAM_ERROR', status: 418 },
    'UPSTREAM_ERROR keeps the status',
  );
});

t.test('a large error body is kept as text cut short', async (t) => {
  const { client, opco } = await setup(t, (_req, res) => res.writeHead(500).end('e'.repeat(100_000)));
  const err = await failure(t, client.call(callContext(opco, 'GET /dossiers/etats')));
  t.type(err.upstream, 'string');
  t.ok((err.upstream as string).length < 10_000, `cut to ${(err.upstream as string).length} characters`);
});

t.test('a 401 is retried once when the authentication says fresh credentials may do (D10)', async (t) => {
  const { client, opco } = await setup(t, (_req, res) => answerJson(res, 401, {}), { refusable: true });
  const first = await client.call(callContext(opco, 'GET /dossiers/etats')).catch((err: unknown) => err);
  t.ok(first instanceof AuthRefreshNeeded, 'the first 401 asks for a refresh');
  t.match(
    await failure(t, client.call(callContext(opco, 'GET /dossiers/etats'), false)),
    { code: 'HTTP_ERROR', status: 403 },
    'the second one is the answer',
  );
});

t.test('the auth transport posts token requests through the same client', async (t) => {
  const { upstream, client } = await setup(t, (_req, res) => answerJson(res, 200, { access_token: 'a' }));
  const answer = await client.transport({
    url: `${upstream.url}/oauth/token?x=1`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
    timeoutMs: 1000,
  });
  t.same(answer, { status: 200, text: '{"access_token":"a"}' });
  t.match(upstream.received[0], { method: 'POST', path: '/oauth/token?x=1' });
  t.equal(upstream.received[0].body.toString(), 'grant_type=client_credentials');
  upstream.answer(() => undefined);
  const late = await client
    .transport({ url: upstream.url, headers: {}, body: '', timeoutMs: 100 })
    .catch((err: unknown) => err);
  t.match(late, { code: 'TIMEOUT' }, 'a token request has its time limit');
});

t.test('a token answer over maxAnswerBytes is refused, whether declared or streamed', async (t) => {
  const big = JSON.stringify({ access_token: 'x'.repeat(2000) });
  const { upstream, client } = await setup(t, (_req, res) => answerJson(res, 200, JSON.parse(big)), {
    maxAnswerBytes: 1000,
  });
  const send = () =>
    client.transport({ url: upstream.url, headers: {}, body: '', timeoutMs: 1000 }).catch((err: unknown) => err);
  t.match(await send(), { code: 'TOO_LARGE' }, 'Content-Length over the limit');
  upstream.answer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.write(big.slice(0, 600));
    res.end(big.slice(600)); // chunked, no Content-Length: the cap is met while reading
  });
  t.match(await send(), { code: 'TOO_LARGE' }, 'chunks over the limit');
  upstream.answer((_req, res) => answerJson(res, 200, { access_token: 'x'.repeat(900) }));
  t.match(await send(), { status: 200, text: /^\{"access_token":"x{900}"\}$/ }, 'an answer under the limit passes');
});

t.test('an OAuth token answer over the limit is an unusable upstream answer, not a network error', async (t) => {
  const { upstream, client } = await setup(t, (_req, res) => answerJson(res, 200, { access_token: 'x'.repeat(2000) }), {
    maxAnswerBytes: 1000,
  });
  const auth = oauthClientCredentials().setup({
    opcoId: 'big',
    adapter: 'inline',
    entry: { tokenUrl: `${upstream.url}/token`, clientId: 'c', clientSecretEnv: 'SECRET' },
    env: { SECRET: 's' },
    clock: systemClock,
    timeoutMs: 1000,
    send: client.transport,
  });
  t.match(await failure(t, auth.headers()), { code: 'UPSTREAM_INVALID_RESPONSE', status: 502 });
});

t.test('an opco without authentication is a programming error, not a call', async (t) => {
  const { upstream, client, opco } = await setup(t);
  await t.rejects(client.call(callContext({ ...opco, id: 'other' }, 'GET /dossiers/etats')));
  t.equal(upstream.received.length, 0, 'nothing was sent');
});
