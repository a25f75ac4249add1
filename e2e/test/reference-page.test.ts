// The API reference page (GET /docs) and the document it renders (GET /doc): the page loads only
// what the service itself serves, and the served document is valid OpenAPI 3.0 for a third-party
// validator (swagger-parser), whichever plugins are enabled.
import t, { type Test } from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startService, type Service } from '../src/index.js';

const service = await startService();
t.teardown(() => service.close());

/** The URLs of the page's scripts, style sheets and other linked resources. */
function resourceUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
}

t.test('GET /docs: an HTML page, no key needed, under a strict Content-Security-Policy', async (t) => {
  const reply = await service.get('/docs', { key: null });
  t.equal(reply.status, 200);
  t.match(reply.headers.get('content-type'), /^text\/html; charset=utf-8/);
  const csp = reply.headers.get('content-security-policy') ?? '';
  t.match(csp, /default-src 'none'/);
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from this origin only, nothing inline');
  t.match(csp, /style-src 'self'(;|$)/, 'styles from this origin only, nothing inline');
  t.notMatch(csp, /unsafe-|https?:|\*/);
  t.equal(reply.headers.get('x-content-type-options'), 'nosniff');
  t.match(reply.text, /<div id="reference" data-document="\/doc">/);
  t.notMatch(reply.text, /<script>|<style>|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler');
});

t.test('the page names no external URL and every resource it loads is served here with its type', async (t) => {
  const { text } = await service.get('/docs', { key: null });
  t.notMatch(text, /https?:\/\//, 'no http(s):// URL in the page');
  const urls = resourceUrls(text).filter((url) => !url.startsWith('data:'));
  t.ok(urls.some((u) => u.endsWith('.js')) && urls.some((u) => u.endsWith('.css')), urls.join(', '));
  for (const url of urls) {
    t.match(url, /^\/docs\/assets\/[\w.-]+$/, `${url} is on this service`);
    const reply = await service.get(url, { key: null });
    t.equal(reply.status, 200, url);
    const type = url.endsWith('.js') ? /^text\/javascript; charset=utf-8$/ : /^text\/css; charset=utf-8$/;
    t.match(reply.headers.get('content-type'), type, `${url} content type`);
    t.ok(reply.text.length > 0, `${url} has content`);
  }
  const bundle = await service.get('/docs/assets/swagger-ui-bundle.js', { key: null });
  t.match(bundle.text, /SwaggerUIBundle/, 'the renderer itself, from swagger-ui-dist');
  t.ok(bundle.text.length > 500_000, `${bundle.text.length} bytes`);
  const start = await service.get('/docs/assets/reference.js', { key: null });
  t.match(start.text, /validatorUrl: null/, 'the public validator is never called');
});

t.test('an unknown asset is a 404 in the error body, no file outside the list is reachable', async (t) => {
  for (const name of ['nope.js', 'package.json', '..%2Fpackage.json', 'swagger-ui-bundle.js.map', 'absolute-path.js']) {
    const reply = await service.get(`/docs/assets/${name}`, { key: null });
    t.equal(reply.status, 404, name);
    t.equal(reply.body.code, 'NOT_FOUND', name);
  }
  t.equal((await service.request('POST', '/docs', { key: null })).status, 405, 'GET only');
});

/** The document an instance serves, checked by swagger-parser (which dereferences its input). */
async function validDocument(t: Test, instance: Service): Promise<Record<string, any>> {
  const served = (await instance.get('/doc', { key: null })).body;
  await t.resolves(SwaggerParser.validate(structuredClone(served)), 'swagger-parser: valid OpenAPI 3.0');
  return served;
}

t.test('/doc with the default plugins is valid, with examples and notification callbacks', async (t) => {
  const doc = await validDocument(t, service);
  t.ok(doc.paths['/docs'].get, '/docs is in the document');
  t.ok(doc.paths['/{opcoId}/factures'].post.requestBody.content['application/json'].example, 'POST example');
  t.ok(Object.keys(doc.paths['/webhooks'].post.callbacks).includes('job.completed'), 'callbacks');
});

t.test('/doc with plugins: ["cache"] is valid and lists only the routes served', async (t) => {
  const small = await startService({ config: { plugins: ['cache'] } });
  t.teardown(() => small.close());
  const doc = await validDocument(t, small);
  t.notOk(doc.paths['/webhooks'], 'no webhook routes');
  t.notOk(doc.paths['/{opcoId}/jobs/{jobId}'], 'no job routes');
  t.notOk(doc.paths['/sync/dossiers'], 'no sync routes');
  t.ok(doc.paths['/{opcoId}/dossiers'].get, 'read routes');
  t.equal((await small.get('/docs', { key: null })).status, 200, 'the page is served');
});

t.test('swagger-parser refuses a broken document: the check can fail', async (t) => {
  const doc = structuredClone((await service.get('/doc', { key: null })).body);
  delete doc.paths['/webhooks'].post.callbacks['job.completed']['{$request.body#/callbackUrl}'].post.responses['2XX']
    .description;
  await t.rejects(SwaggerParser.validate(doc), /description/);
});
