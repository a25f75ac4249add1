// One table of error codes (SPEC 7, D5, P2): the code list the OpenAPI document publishes is the
// table's, and every failure maps onto it (docs/errors.md: errors-doc.test.ts).
import t from 'tap';
import { loadSchema } from '@opco-proxy/schemas';
import {
  ERROR_CODES,
  QueueUnavailableError,
  StoreUnavailableError,
  asServiceError,
  createError,
  errorCodeSpec,
  errorCodes,
  isRetriedByWorkers,
  toErrorBody,
} from '../src/application.js';

t.test('the ErrorBody schema lists exactly the codes of the table', async (t) => {
  const schema = loadSchema('error-body') as { properties: { code: { enum: string[] } } };
  t.same([...schema.properties.code.enum].sort(), Object.keys(ERROR_CODES).sort());
});

t.test("whether a worker retries is the table's retryable, unless the table says otherwise", async (t) => {
  for (const code of errorCodes) {
    const error = createError(code);
    const spec = errorCodeSpec(code);
    t.equal(isRetriedByWorkers(error), error.retryable && spec.workerRetry !== false, code);
  }
  const unusable = createError('UPSTREAM_INVALID_RESPONSE');
  t.ok(unusable.retryable, 'a caller may ask again for an unusable answer');
  t.notOk(isRetriedByWorkers(unusable), 'a job step or a sync batch does not');
  t.ok(
    isRetriedByWorkers(createError('UPSTREAM_ERROR', 'x', { status: 503 })),
    'an upstream 503 is retried by workers',
  );
  t.notOk(isRetriedByWorkers(createError('UPSTREAM_ERROR', 'x', { status: 422 })), 'an upstream 422 is not');
});

t.test(
  'outages of the store or the queue are 503 UNAVAILABLE with Retry-After; anything else 500 without its message',
  async (t) => {
    for (const outage of [new StoreUnavailableError('mongo gone'), new QueueUnavailableError('broker gone')]) {
      const error = asServiceError(outage);
      t.equal(error.code, 'UNAVAILABLE');
      t.equal(error.status, 503);
      t.equal(error.headers['Retry-After'], '5');
      t.notMatch(error.message, /gone/, 'the backend message stays in the logs');
    }
    const internal = asServiceError(new RangeError('Maximum call stack size exceeded'));
    t.equal(internal.code, 'INTERNAL_ERROR');
    t.same(toErrorBody(internal), {
      status: 'error',
      code: 'INTERNAL_ERROR',
      description: 'Unexpected internal error',
    });
    const kept = createError('METHOD_NOT_ALLOWED');
    t.equal(asServiceError(kept), kept, 'a ServiceError is kept as it is');
    t.equal(kept.status, 405);
  },
);

t.test('a refusal (4xx) carries no stack, a fault (5xx) does, and the process keeps its limit', async (t) => {
  const limit = Error.stackTraceLimit;
  const refusal = createError('RATE_LIMITED', 'budget spent');
  const fault = createError('UPSTREAM_ERROR', 'upstream answered 502', { status: 502 });
  const answered = createError('UPSTREAM_ERROR', 'upstream answered 409', { status: 409 });
  t.equal(refusal.stack, 'ServiceError: budget spent', 'only its message');
  t.equal(answered.stack, 'ServiceError: upstream answered 409', 'the status given, not the code, decides');
  t.match(fault.stack, /\n\s+at /, 'where it was made');
  t.equal(Error.stackTraceLimit, limit);
  t.match(new Error('other').stack, /\n\s+at /, 'other errors keep theirs');
});
