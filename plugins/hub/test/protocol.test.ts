// The protocol's messages against their JSON Schemas (schemas/json/hub-*.schema.json): what does
// not fit is refused with the type and the field at fault, every problem at once; the welcome of
// a hub of either version is read. Over real sockets: hub-server/test/protocol.test.ts.
import t from 'tap';
import { parseHubMessage, parseInstanceMessage } from '../src/index.js';

const hello = {
  type: 'hello',
  protocol: 1,
  instanceId: 'i-1',
  expectedInstances: 2,
  limits: { op: { limit: 60, windowMs: 60000 } },
  usage: [],
  complete: true,
};
const ask = {
  type: 'ask',
  askId: 'a',
  opcoId: 'op',
  method: 'GET',
  route: 'r',
  priority: 5,
  tenant: 't',
  rateLimit: { limit: 1, windowMs: 1 },
};
const welcome = { type: 'welcome', instanceId: 'i-1', heartbeatMs: 10_000 };

t.test('instance messages that do not fit are refused, with the type and the fields at fault', async (t) => {
  t.same(parseInstanceMessage(JSON.stringify(hello)), { ok: true, message: hello });
  const refused: Array<[unknown, string]> = [
    ['not json', 'message is not JSON'],
    [[], 'message has no known type'],
    [null, 'message has no known type'],
    [{ type: 'constructor' }, 'message has no known type'],
    [{ type: 'welcome' }, 'message has no known type'],
    [{ type: 'cancel' }, 'cancel: askId: Required'],
    [{ ...hello, protocol: 2 }, 'hello: protocol: Invalid literal value, expected 1'],
    [{ ...hello, extra: 1 }, 'hello: extra: Unrecognized field'],
    [JSON.parse('{"type":"cancel","askId":"a","__proto__":{"x":1}}'), 'cancel: __proto__: Unrecognized field'],
    [
      { ...hello, limits: { __proto__: null, constructor: { limit: 1, windowMs: 1 } } },
      'hello: limits: Invalid key "constructor"',
    ],
    [{ ...hello, expectedInstances: 1e300 }, 'hello: expectedInstances: Must be less than or equal to 10000'],
    [
      { ...hello, usage: [{ id: 'x', opcoId: 'op', startedAgoMs: -1 }] },
      'hello: usage.0.startedAgoMs: Must be greater than or equal to 0',
    ],
    [
      { type: 'done', grantId: 'g', outcome: 'maybe' },
      'done: outcome: Invalid enum value, expected one of used, unused',
    ],
    [
      { type: 'metrics', windows: { op: { requests: 1, errors: 0, rateLimited: 0, averageLatencyMs: 'fast' } } },
      'metrics: windows.op.averageLatencyMs: Expected number',
    ],
    [
      { ...ask, askId: 'a b', opcoId: '__proto__', method: 'DELETE', proven: 'no' },
      'ask: askId: must be 1-128 letters, digits or _.:-; opcoId: is a reserved name; method: Invalid enum value, expected one of GET, POST; proven: Expected boolean',
    ],
  ];
  for (const [message, error] of refused) {
    t.same(
      parseInstanceMessage(typeof message === 'string' ? message : JSON.stringify(message)),
      { ok: false, error },
      error,
    );
  }
  t.same(
    parseInstanceMessage(
      '{"type":"ask","askId":"x","opcoId":"op","method":"GET","route":"r","priority":5,"tenant":"t","rateLimit":{"limit":1e400,"windowMs":1}}',
    ),
    { ok: false, error: 'ask: rateLimit.limit: Expected integer' },
    'a number JSON turns into Infinity',
  );
  // The largest hello there is, every entry bad: refused in linear time, its problems bounded.
  const flood = {
    ...hello,
    usage: Array.from({ length: 100_000 }, (_, i) => ({ id: `bad id ${i}`, opcoId: 'op', startedAgoMs: 1 })),
  };
  const started = performance.now();
  const parsed = parseInstanceMessage(JSON.stringify(flood));
  const tookMs = performance.now() - started;
  t.same(
    parsed,
    {
      ok: false,
      error:
        'hello: usage.0.id: Invalid format; usage.1.id: Invalid format; usage.2.id: Invalid format; usage.3.id: Invalid format; usage.4.id: Invalid format; and 99995 more',
    },
    'the first five problems and a count',
  );
  t.ok(tookMs < 20_000, `refused in ${Math.round(tookMs)} ms (minutes when ajv-errors rescanned the errors per entry)`);
  t.ok(
    parseInstanceMessage(JSON.stringify(ask)).ok,
    'an ask without `proven`: what an instance of the previous version sends',
  );
  t.ok(parseInstanceMessage(JSON.stringify({ ...ask, proven: false })).ok);
  t.ok(parseInstanceMessage(JSON.stringify({ ...ask, proven: true })).ok);
  t.same(parseInstanceMessage(JSON.stringify({ ...ask, usage: [{ id: 'x', opcoId: 'op', startedAgoMs: 5 }] })), {
    ok: false,
    error: 'ask: usage: Unrecognized field',
  });
});

t.test('hub messages: the welcome of either version is read, a mix of the two is not', async (t) => {
  t.ok(
    parseHubMessage(JSON.stringify({ ...welcome, protocol: 2, fleetId: 'publisher-a' })).ok,
    'protocol 2 names the fleet fleetId',
  );
  t.ok(
    parseHubMessage(JSON.stringify({ ...welcome, protocol: 1, tenantId: 'publisher-a' })).ok,
    'a hub of the previous version names it tenantId',
  );
  t.same(parseHubMessage(JSON.stringify({ ...welcome, protocol: 2, tenantId: 'publisher-a' })), {
    ok: false,
    error: "welcome: fleetId: Required; tenantId: is protocol 1's name of fleetId; protocol 2 says fleetId",
  });
  t.same(parseHubMessage(JSON.stringify({ ...welcome, protocol: 1, fleetId: 'publisher-a' })), {
    ok: false,
    error: "welcome: tenantId: Required; fleetId: is protocol 2's name; protocol 1 says tenantId",
  });
  t.same(parseHubMessage(JSON.stringify({ ...welcome, protocol: 2, fleetId: 'f', heartbeatMs: -5 })), {
    ok: false,
    error: 'welcome: heartbeatMs: Must be greater than or equal to 100',
  });
  t.same(
    parseHubMessage(JSON.stringify({ type: 'grant', askId: 'a', grantId: 'g', expiresInMs: 1 })),
    { ok: false, error: 'grant: token: Required' },
    'a grant without its token',
  );
  t.same(
    parseHubMessage(JSON.stringify(hello)),
    { ok: false, error: 'message has no known type' },
    'an instance message from the hub',
  );
});
