// D13 as of issue 27: which upstream answers are the upstream failing.
import t from 'tap';
import { callVerdict, createError, keyAccepted } from '../src/application.js';

t.test("the client's faults and refused keys are not failures; the upstream's own are", async (t) => {
  t.equal(callVerdict(undefined), 'answered');
  t.equal(callVerdict(createError('NOT_FOUND', 'x', { upstreamStatus: 404 })), 'client-fault');
  t.equal(callVerdict(createError('UPSTREAM_ERROR', 'x', { status: 422, upstreamStatus: 422 })), 'client-fault');
  t.equal(callVerdict(createError('UPSTREAM_ERROR', 'x', { status: 400, upstreamStatus: 400 })), 'client-fault');
  t.equal(callVerdict(createError('VALIDATION_ERROR', 'x')), 'client-fault');
  t.equal(
    callVerdict(createError('HTTP_ERROR', 'x', { upstreamStatus: 403 })),
    'forbidden',
    'a 403 the profile does not recognise as a key refusal',
  );
  t.equal(callVerdict(createError('HTTP_ERROR', 'x', { upstreamStatus: 403, keyRefused: true })), 'key-refused');
  t.equal(
    callVerdict(createError('HTTP_ERROR', 'x', { upstreamStatus: 401 })),
    'failure',
    "a 401 after a fresh token: the service's own credentials",
  );
  t.equal(callVerdict(createError('UPSTREAM_ERROR', 'x', { status: 429 })), 'rate-limited');
  t.equal(callVerdict(createError('UPSTREAM_ERROR', 'x', { status: 503 })), 'failure');
  t.equal(callVerdict(createError('UPSTREAM_ERROR', 'token endpoint', { status: 502 })), 'failure');
  t.equal(callVerdict(createError('TIMEOUT')), 'failure');
  t.equal(callVerdict(createError('NETWORK_ERROR')), 'failure');
  t.equal(callVerdict(createError('UPSTREAM_INVALID_RESPONSE')), 'failure');
  t.ok(keyAccepted('answered') && keyAccepted('client-fault'));
  t.notOk(
    keyAccepted('failure') || keyAccepted('rate-limited') || keyAccepted('key-refused') || keyAccepted('forbidden'),
    'a failure proves nothing of the key',
  );
});
