// One table of error codes (SPEC 7, D5, P2): the code list the OpenAPI document publishes and the
// one docs/errors.md gives are the table's, and every failure maps onto it.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { loadSchema } from '@opco-proxy/schemas';
import { ERROR_CODES, QueueUnavailableError, StoreUnavailableError, asServiceError, createError, toErrorBody } from '../src/index.js';

t.test('the ErrorBody schema lists exactly the codes of the table', async (t) => {
  const schema = loadSchema('error-body') as { properties: { code: { enum: string[] } } };
  t.same([...schema.properties.code.enum].sort(), Object.keys(ERROR_CODES).sort());
});

t.test('docs/errors.md gives every code of the table, with its status and whether it is retryable', async (t) => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map<string, { status: string; retryable: string; when: string }>();
  for (const [, code, status, retryable, when] of doc.matchAll(/^\| ([A-Z_]+) \| ([^|]+) \| ([^|]+) \| (.+) \|$/gm)) {
    rows.set(code, { status: status.trim(), retryable: retryable.trim(), when: when.trim() });
  }
  t.same([...rows.keys()].filter((code) => !Object.hasOwn(ERROR_CODES, code)), [], 'no code the table lacks');
  // Whether these two are retried depends on the failure: UPSTREAM_ERROR on the upstream's status,
  // UPSTREAM_INVALID_RESPONSE on the caller (a GET may retry; a job step fails, retry-policy.ts).
  const decidedByCase = new Set(['UPSTREAM_ERROR', 'UPSTREAM_INVALID_RESPONSE']);
  for (const [code, { status, retryable }] of Object.entries(ERROR_CODES)) {
    const row = rows.get(code);
    if (!row) {
      t.fail(`${code} is missing from docs/errors.md`);
      continue;
    }
    if (code === 'UPSTREAM_ERROR') {
      // Its status is the upstream's; the table's 502 is what it falls back to.
      t.equal(row.status, "upstream's", code);
      t.match(row.when, new RegExp(`\\b${status}\\b`), `${code}: the ${status} it falls back to`);
    } else {
      t.equal(row.status, String(status), `${code}: HTTP ${status}`);
    }
    if (row.retryable === 'yes' || row.retryable === 'no') t.equal(row.retryable === 'yes', retryable, `${code}: retryable ${row.retryable}`);
    else t.ok(decidedByCase.has(code), `${code}: retryable "${row.retryable}" is not yes or no`);
    t.ok(row.when.length > 0, `${code}: when`);
  }
});

t.test('outages of the store or the queue are 503 UNAVAILABLE with Retry-After; anything else 500 without its message', async (t) => {
  for (const outage of [new StoreUnavailableError('mongo gone'), new QueueUnavailableError('broker gone')]) {
    const error = asServiceError(outage);
    t.equal(error.code, 'UNAVAILABLE');
    t.equal(error.status, 503);
    t.equal(error.headers['Retry-After'], '5');
    t.notMatch(error.message, /gone/, 'the backend message stays in the logs');
  }
  const internal = asServiceError(new RangeError('Maximum call stack size exceeded'));
  t.equal(internal.code, 'INTERNAL_ERROR');
  t.same(toErrorBody(internal), { status: 'error', code: 'INTERNAL_ERROR', description: 'Unexpected internal error' });
  const kept = createError('METHOD_NOT_ALLOWED');
  t.equal(asServiceError(kept), kept, 'a ServiceError is kept as it is');
  t.equal(kept.status, 405);
});
