// One table of error codes (SPEC 7, D5, P2): the code list the OpenAPI document publishes is the
// table's, and every failure maps onto it.
import t from 'tap';
import { loadSchema } from '@opco-proxy/schemas';
import { ERROR_CODES, QueueUnavailableError, StoreUnavailableError, asServiceError, createError, toErrorBody } from '../src/index.js';

t.test('the ErrorBody schema lists exactly the codes of the table', async (t) => {
  const schema = loadSchema('error-body') as { properties: { code: { enum: string[] } } };
  t.same([...schema.properties.code.enum].sort(), Object.keys(ERROR_CODES).sort());
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
