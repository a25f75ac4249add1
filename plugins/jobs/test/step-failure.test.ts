// SPEC 3.1, 8, D5: which errors are retried, after how long, and how many times.
import t from 'tap';
import { createError } from '@opco-proxy/core';
import { RetryPolicy } from '@opco-proxy/core/durable';
import { nextMove, mayHaveReachedUpstream } from '../src/step-failure.js';

const backoff = new RetryPolicy(3, [1000, 2000, 4000]);

t.test('retryable errors back off 1 s then 2 s, and stop at 3 attempts', async (t) => {
  for (const error of [
    createError('UPSTREAM_ERROR', 'x', { status: 503 }),
    createError('UPSTREAM_ERROR', 'x', { status: 500 }),
    createError('UPSTREAM_ERROR', 'x', { status: 429 }),
    createError('TIMEOUT'),
    createError('NETWORK_ERROR'),
  ]) {
    t.same(nextMove(error, 1, backoff), { kind: 'retry', delayMs: 1000 }, `${error.code} ${error.status}`);
    t.same(nextMove(error, 2, backoff), { kind: 'retry', delayMs: 2000 });
    t.same(nextMove(error, 3, backoff), { kind: 'fail' });
  }
});

t.test('400, 403, 404, 422 and unusable answers fail at once', async (t) => {
  for (const error of [
    createError('UPSTREAM_ERROR', 'x', { status: 400 }),
    createError('HTTP_ERROR'),
    createError('NOT_FOUND'),
    createError('UPSTREAM_ERROR', 'x', { status: 422 }),
    createError('UPSTREAM_INVALID_RESPONSE'),
    createError('NOT_SUPPORTED'),
  ]) {
    t.same(nextMove(error, 1, backoff), { kind: 'fail' }, error.code);
  }
});

t.test('an exhausted local budget waits without spending an attempt', async (t) => {
  const limited = createError('RATE_LIMITED', 'x', { headers: { 'Retry-After': '3' } });
  t.same(nextMove(limited, 3, backoff), { kind: 'wait', delayMs: 3000 });
});

t.test('only timeouts and network failures leave the upstream outcome unknown', async (t) => {
  t.ok(mayHaveReachedUpstream(createError('TIMEOUT')));
  t.ok(mayHaveReachedUpstream(createError('NETWORK_ERROR')));
  t.notOk(mayHaveReachedUpstream(createError('UPSTREAM_ERROR', 'x', { status: 500 })));
});
