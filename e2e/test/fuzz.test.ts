// Issue "hardening", done-when 2: a few thousand malformed requests (fixed seed) over every
// route of the manifest: no 5xx but 501/502/503/504, every answer in the SPEC 7 shape and as
// /doc says, and the process answering /health throughout.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { Agent, fetch as undiciFetch } from 'undici';
import { operations, type OperationId } from '@opco-proxy/schemas';
import { contractOf, contractProblems } from '../src/contract.js';
import {
  certificatBody,
  conventionBody,
  documentBody,
  dossierBody,
  factureBody,
  startService,
  KEY_A,
  KEY_B,
} from '../src/index.js';

const REQUESTS = 3000;
const RAW_SHARE = 0.1;
const CONCURRENCY = 8;

/** mulberry32: the same seed, the same requests, on any machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
  return { next, pick, chance: (p: number) => next() < p };
}

const random = prng(20261122);
const service = await startService({
  opcos: { common: { adapter: 'common-api' } },
  opco: { rateLimit: { limit: 100_000, windowMs: 60_000 } },
  config: {
    tenantRateLimit: { perSecond: 100_000, burst: 100_000 },
    limits: { bodyBytes: 200_000, fileBytes: 50_000 },
  },
});
t.teardown(() => service.close());
const contract = contractOf(await (await fetch(`${service.url}/doc`)).json());

const STRINGS = [
  '',
  ' ',
  'x',
  'é',
  '💥',
  '\u0000',
  '%',
  '%zz',
  '..',
  '../../etc/passwd',
  '<script>',
  "' OR 1=1",
  'a'.repeat(3000),
  '{}',
  'null',
  '-1',
  '1e309',
  'DOS-2019-000001',
];
const OPCOS = ['sandbox', 'common', 'nowhere', 'SANDBOX', '%2e%2e', 'a'.repeat(300), 'health', 'sync'];
const KEYS = [KEY_A, KEY_A, KEY_B, undefined, 'short', 'k'.repeat(600), 'key\twith\ttabs', 'forbidden-key-000'];
const BODIES: Array<() => unknown> = [
  () => dossierBody(),
  () => factureBody('DOS-2019-000001'),
  () => conventionBody('DOS-2019-000001'),
  () => certificatBody('DOS-2019-000001'),
  () => documentBody('DOS-2019-000001'),
  () => ({ opcoId: 'sandbox', minYear: 2024 }),
  () => ({ callbackUrl: 'https://example.com/h', events: ['job.completed'] }),
  () => ({}),
  () => [],
  () => 'text',
  () => 42,
  () => null,
];

function mutate(value: unknown, depth = 0): unknown {
  if (depth > 6 || random.chance(0.05))
    return random.pick<unknown>([null, 0, -1, 1e308, true, random.pick(STRINGS), [], {}, [[[]]]]);
  if (Array.isArray(value)) return random.chance(0.2) ? [] : value.map((v) => mutate(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (random.chance(0.1)) continue;
      out[random.chance(0.05) ? random.pick(STRINGS) : k] = random.chance(0.5) ? mutate(v, depth + 1) : v;
    }
    if (random.chance(0.1))
      out[random.pick(['_files', '__proto__', 'constructor', '$where', 'a.b'])] = random.pick<unknown>([
        { cerfa: 'bm90IGEgcGRm' },
        { x: '!!!' },
        'x',
        {},
      ]);
    return out;
  }
  return random.chance(0.3) ? random.pick<unknown>(STRINGS) : value;
}

function bodyText(): { text: string | Buffer; headers: Record<string, string> } {
  const json = JSON.stringify(mutate(random.pick(BODIES)()) ?? null);
  const roll = random.next();
  if (roll < 0.6) return { text: json, headers: { 'content-type': 'application/json' } };
  if (roll < 0.67)
    return { text: json.slice(0, Math.floor(json.length / 2)), headers: { 'content-type': 'application/json' } };
  if (roll < 0.72)
    return {
      text: `${'['.repeat(40 + Math.floor(random.next() * 5000))}`,
      headers: { 'content-type': 'application/json' },
    };
  if (roll < 0.77)
    return {
      text: gzipSync(json),
      headers: {
        'content-type': 'application/json',
        'content-encoding': random.pick(['gzip', 'deflate', 'br', 'x-zip']),
      },
    };
  if (roll < 0.82)
    return {
      text: json,
      headers: {
        'content-type': 'application/json',
        'content-encoding': random.pick(['gzip', 'br', 'identity', 'zstd']),
      },
    };
  if (roll < 0.87)
    return {
      text: 'cerfa=1&x=2',
      headers: {
        'content-type': random.pick([
          'application/x-www-form-urlencoded',
          'text/plain',
          'multipart/form-data; boundary=x',
          '',
        ]),
      },
    };
  if (roll < 0.92)
    return {
      text: Buffer.from(Array.from({ length: 64 }, () => Math.floor(random.next() * 256))),
      headers: { 'content-type': 'application/json' },
    };
  return { text: 'x'.repeat(250_000), headers: { 'content-type': 'application/json' } };
}

/** Methods Node's parser knows and no route takes (WebDAV, SSDP, cache purges...): 501 on every path. */
const ODD_METHODS = [
  'TRACE',
  'PROPFIND',
  'PROPPATCH',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'UNLOCK',
  'REPORT',
  'SEARCH',
  'M-SEARCH',
  'NOTIFY',
  'SUBSCRIBE',
  'PURGE',
  'LINK',
  'QUERY',
];

function requestFor(): { method: string; path: string; headers: Record<string, string>; body?: string | Buffer } {
  const id = random.pick(Object.keys(operations) as OperationId[]);
  const spec = operations[id] as { method: string; path: string };
  let path = spec.path
    .replace('{opcoId}', encodeURIComponent(random.pick(OPCOS)))
    .replace('{jobId}', random.pick(['0e3c1b2a-0000-4000-8000-000000000000', 'not-a-uuid', random.pick(STRINGS)]))
    .replace(/\{[^}]+\}/g, () => encodeURIComponent(random.pick(STRINGS)) || 'x');
  if (random.chance(0.6)) {
    const params = Array.from(
      { length: Math.floor(random.next() * 4) },
      () =>
        `${random.pick(['numeroPage', 'numeroInterne', 'numeroExterne', 'numeroDeca', 'siren', 'XAPIKEY', 'numerosInternes', 'anneeDossier', 'x'])}=${random.pick(STRINGS).slice(0, 200)}`,
    );
    path += `?${params.join('&').replace(/%(?![0-9a-fA-F]{2})/g, random.chance(0.5) ? '%' : '%25')}`;
  }
  const method = random.chance(0.8)
    ? spec.method
    : random.chance(0.75)
      ? random.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'])
      : random.pick(ODD_METHODS);
  const headers: Record<string, string> = {};
  const key = random.pick(KEYS);
  if (key !== undefined) headers['x-api-key'] = key;
  if (random.chance(0.1)) headers['idempotency-key'] = random.pick(['', 'k1', 'k'.repeat(300)]);
  // Header values a client cannot even send (NUL) are left to the raw requests below.
  if (random.chance(0.1))
    headers['x-request-id'] = random
      .pick(STRINGS)
      .replace(/[^\u0001-\u00ff]/g, '')
      .slice(0, 200);
  // TRACE takes no body (RFC 9110 9.3.8), and undici will not send one.
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || method === 'TRACE' || random.chance(0.05))
    return { method, path, headers };
  const { text, headers: bodyHeaders } = bodyText();
  return { method, path, headers: { ...headers, ...bodyHeaders }, body: text };
}

const RAW = [
  'GET /health HTTP/1.1\r\nHost: x\r\nBad header\r\n\r\n',
  'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
  'M-SEARCH * HTTP/1.1\r\nHost: 239.255.255.250:1900\r\nMAN: "ssdp:discover"\r\nST: ssdp:all\r\n\r\n',
  'POST /webhooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n',
  'FROB / HTTP/1.1\r\n\r\n',
  `GET /health HTTP/1.1\r\nX: ${'y'.repeat(17_000)}\r\n\r\n`,
  'GET /health HTTP/9.9\r\n\r\n',
  'GET /health\r\n\r\n',
  'POST /sandbox/dossiers HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nContent-Length: 20\r\n\r\n{}',
  '\x00\x01\x02\x03\r\n\r\n',
];

function rawRequest(text: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(service.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () =>
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0),
        body: answer.split('\r\n\r\n')[1] ?? '',
      }),
    );
    socket.end(text);
  });
}

/** With fetch, but TRACE, which fetch refuses to send (a forbidden method), with undici's own request. */
async function send(
  agent: Agent,
  request: ReturnType<typeof requestFor>,
): Promise<{ status: number; headers: Headers; text: string }> {
  if (request.method === 'TRACE') {
    const url = new URL(service.url + request.path);
    const answer = await agent.request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: request.method,
      headers: request.headers,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers))
      for (const one of [value ?? []].flat()) headers.append(name, one);
    return { status: answer.statusCode, headers, text: await answer.body.text() };
  }
  const response = await undiciFetch(service.url + request.path, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    dispatcher: agent,
  });
  return { status: response.status, headers: response.headers as unknown as Headers, text: await response.text() };
}

t.test(`${REQUESTS} malformed requests over every route`, async (t) => {
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  const one = async (agent: Agent, previous: string[]) => {
    if (random.chance(RAW_SHARE)) {
      const answer = await rawRequest(random.pick(RAW));
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      // Node's parser is lenient with some (an HTTP/9.9 line reads as HTTP/1.1): those are served.
      const refusedWithoutBody = answer.status >= 400 && !/"status":"error"/.test(answer.body);
      // 501 is for a method no route takes (CONNECT, M-SEARCH), and only that.
      const notSupported = answer.status === 501 && /"code":"NOT_SUPPORTED"/.test(answer.body);
      if ((answer.status >= 500 && !notSupported) || refusedWithoutBody)
        problems.push(`raw request answered ${answer.status}: ${answer.body.slice(0, 120)}`);
      return;
    }
    const request = requestFor();
    let response: { status: number; headers: Headers; text: string };
    try {
      response = await send(agent, request);
      previous.push(`${request.method} ${request.path.slice(0, 60)} -> ${response.status}`);
    } catch (err) {
      problems.push(
        `${request.method} ${request.path.slice(0, 80)} after ${previous.at(-1)}: no answer (${String((err as { cause?: unknown }).cause ?? err)})`,
      );
      return;
    }
    const { text } = response;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    if (response.status >= 500 && ![501, 502, 503, 504].includes(response.status))
      problems.push(
        `${request.method} ${request.path.slice(0, 80)} answered ${response.status}: ${text.slice(0, 200)}`,
      );
    if (request.method === 'HEAD') return;
    for (const problem of contractProblems(
      request.method,
      service.url + request.path,
      response.status,
      response.headers,
      text,
      { contract },
    )) {
      problems.push(`${request.method} ${request.path.slice(0, 80)} ${response.status}: ${problem}`);
    }
  };
  const worker = async () => {
    // One connection per request: with keep-alive, a pause of the shared event loop (GC on a
    // loaded machine) lets the service's keep-alive timer close a connection the client is about
    // to reuse — a race of the client's, not an answer of the service's.
    const agent = new Agent({ connections: 1, pipelining: 0 });
    const previous: string[] = [];
    while (sent < REQUESTS) {
      sent += 1;
      if (sent % 100 === 0) {
        const health = await fetch(`${service.url}/health`, { signal: AbortSignal.timeout(5000) });
        if (health.status !== 200) problems.push(`/health answered ${health.status} after ${sent} requests`);
      }
      await one(agent, previous);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  t.same(problems.slice(0, 15), [], `${problems.length} problems in ${REQUESTS} requests`);
  t.equal((await fetch(`${service.url}/health`)).status, 200, 'alive at the end');
});
