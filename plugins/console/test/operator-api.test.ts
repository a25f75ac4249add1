// The console's client of the operator API (ui/operator-api.ts, as esbuild bundles it for the page):
// the key kept for the tab and sent as a Bearer token, answers and refusals of a real kernel's
// /admin routes told apart, and answers no JSON comes with (a proxy's error page) still explained.
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { build } from 'esbuild';
import { createEmbeddedStore } from '@opco-proxy/core';
import { createKernel, resolveConfig } from '@opco-proxy/core/application';
import { startRecordingServer } from '@opco-proxy/core/testing';

const ADMIN_KEY = 'operator-key-of-the-console-tests-0001';

/** What ui/operator-api.ts exports; typed here because tsc compiles no ui file for Node. */
interface OperatorApi {
  operatorKey: { get(): string | null; set(key: string): void; forget(): void };
  KeyRefused: new (message: string) => Error;
  OperatorApiError: new (status: number, message: string) => Error & { status: number };
  callAdmin: <T>(path: string, method?: 'GET' | 'POST') => Promise<T>;
  withQuery: (path: string, query: Record<string, string | undefined>) => string;
}

/**
 * The tab's sessionStorage, which Node 20 lacks: the three calls the module makes. The page's
 * own copy is what a browser keeps per tab; here it lives as long as the test process.
 */
const kept = new Map<string, string>();
Object.defineProperty(globalThis, 'sessionStorage', {
  configurable: true,
  value: {
    getItem: (name: string) => kept.get(name) ?? null,
    setItem: (name: string, value: string) => void kept.set(name, String(value)),
    removeItem: (name: string) => void kept.delete(name),
  },
});

// Bundled as build.mjs bundles it for the page, so what is tested is what the browser runs.
const source = fileURLToPath(new URL('../../ui/operator-api.ts', import.meta.url));
const bundle = await build({ entryPoints: [source], bundle: true, write: false, format: 'esm', target: 'es2020' });
const code = Buffer.from(bundle.outputFiles[0].text).toString('base64');
const api = (await import(`data:text/javascript;base64,${code}`)) as OperatorApi;
const { operatorKey, KeyRefused, OperatorApiError, callAdmin, withQuery } = api;

/** A kernel with its operator routes on a free port, an embedded store and no plugin. */
async function operatorService(t: Test): Promise<string> {
  const store = await createEmbeddedStore({});
  const config = resolveConfig(
    { mode: 'development', host: '127.0.0.1', logLevel: 'silent', plugins: [], opcos: {} },
    { OPCO_PROXY_MASTER_KEY: '0f'.repeat(32), OPCO_PROXY_ADMIN_KEY: ADMIN_KEY },
  );
  const kernel = await createKernel(config, { store });
  t.teardown(async () => {
    await kernel.close({ graceMs: 500 });
    await store.close();
  });
  return kernel.listen(0, '127.0.0.1');
}

/** A recording server answering each request with the status, type and text given. */
async function answering(t: Test, status: number, type: string, text: string) {
  const server = await startRecordingServer((_request, res) => {
    res.writeHead(status, { 'content-type': type });
    res.end(text);
  });
  t.teardown(() => server.close());
  return { url: server.url, seen: server.received };
}

/** The error `promise` rejects with (a test fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error & { status?: number }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { status?: number };
  }
  throw new Error('expected a rejection');
}

t.beforeEach(() => operatorKey.forget());

t.test('the key is kept for the tab under one name, and forgotten', async (t) => {
  t.equal(operatorKey.get(), null);
  operatorKey.set('k-1');
  t.same([...kept], [['opco-proxy.operator-key', 'k-1']]);
  t.equal(operatorKey.get(), 'k-1');
  operatorKey.forget();
  t.same([operatorKey.get(), kept.size], [null, 0]);
});

t.test('without a key nothing is sent: the page is told to ask for one', async (t) => {
  const server = await answering(t, 200, 'application/json', '{}');
  const err = await rejection(callAdmin(`${server.url}/admin/jobs`));
  t.ok(err instanceof KeyRefused, 'KeyRefused');
  t.equal(err.message, 'no operator key');
  t.same(server.seen, [], 'no request');
});

t.test('the operator API answers with the key it holds; the answer is its JSON body', async (t) => {
  const url = await operatorService(t);
  operatorKey.set(ADMIN_KEY);
  t.same(await callAdmin(`${url}/admin/upstreams`), { items: [] }, 'no opcoId configured');
  t.same(await callAdmin(`${url}/admin/queues`), { kind: 'embedded', items: [] });
  const auditPath = withQuery('/admin/audit', { limit: '5', action: undefined });
  const audit = await callAdmin<{ items: unknown[]; next: string | null }>(url + auditPath);
  t.same(audit, { items: [], next: null }, 'a page of the audit trail');
});

t.test("a refused key is KeyRefused with the service's description; other errors keep their status", async (t) => {
  const url = await operatorService(t);
  operatorKey.set('not-the-operator-key-0000000000000000');
  const refused = await rejection(callAdmin(`${url}/admin/upstreams`));
  t.ok(refused instanceof KeyRefused, 'KeyRefused: the page asks for the key again');
  t.equal(refused.message, 'Authorization: Bearer <operator key> is required');
  operatorKey.set(ADMIN_KEY);
  const invalid = await rejection(callAdmin(`${url}/admin/audit?limit=many`));
  t.ok(invalid instanceof OperatorApiError, 'OperatorApiError');
  t.notOk(invalid instanceof KeyRefused, 'not a refused key');
  t.equal(invalid.status, 400);
  t.equal(invalid.message, 'invalid query parameters', "the description of the service's error body");
  const absent = await rejection(callAdmin(`${url}/admin/jobs`));
  const unknown = [absent instanceof OperatorApiError, absent.status, absent.message];
  t.same(unknown, [true, 404, 'no route GET /admin/jobs'], 'a route of a plugin not enabled');
});

t.test('each call carries the key as a Bearer token, asks for JSON and uses the method given', async (t) => {
  const server = await answering(t, 202, 'application/json', '{"queued":true}');
  operatorKey.set('k-2');
  t.same(await callAdmin(`${server.url}/admin/deliveries/d%201/resend`, 'POST'), { queued: true });
  t.same(await callAdmin(`${server.url}/admin/jobs?status=failed`), { queued: true });
  t.same(
    server.seen.map((s) => [s.method, s.path, s.headers.authorization, s.headers.accept]),
    [
      ['POST', '/admin/deliveries/d%201/resend', 'Bearer k-2', 'application/json'],
      ['GET', '/admin/jobs?status=failed', 'Bearer k-2', 'application/json'],
    ],
  );
});

t.test('an answer without a JSON body is still explained by its method, path and status', async (t) => {
  const gateway = await answering(t, 502, 'text/html', '<html><body>Bad Gateway</body></html>');
  operatorKey.set('k-3');
  const err = await rejection(callAdmin(`${gateway.url}/admin/syncs`));
  t.ok(err instanceof OperatorApiError);
  t.same([err.status, err.message], [502, `GET ${gateway.url}/admin/syncs answered 502`]);
  const bare = await answering(t, 401, 'text/plain', 'no');
  const refused = await rejection(callAdmin(`${bare.url}/admin/syncs`));
  t.ok(refused instanceof KeyRefused);
  t.equal(refused.message, 'the operator key was refused', 'a 401 without a description');
});

t.test('withQuery keeps the non-empty values, encoded, and no "?" when none is left', async (t) => {
  t.equal(withQuery('/admin/jobs', { status: 'failed', opcoId: undefined, cursor: '' }), '/admin/jobs?status=failed');
  t.equal(withQuery('/admin/jobs', { opcoId: 'a b&c', cursor: 'x/y=' }), '/admin/jobs?opcoId=a+b%26c&cursor=x%2Fy%3D');
  t.equal(withQuery('/admin/audit', { action: undefined }), '/admin/audit');
});
