// The hub's HTTP side (D26, D28): health and metrics without auth, the admin API behind the
// admin bearer, hub keys (shown once, stored as a hash), error bodies of SPEC 7, start-up checks.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, sha256Hex } from '@opco-proxy/core';
import { parseHubConfig, runHub, startHub } from '../src/index.js';
import { ADMIN_KEY, HUB_ENV, logInto, SECRET, startTestHub } from './fixtures/hub-harness.js';

t.test('health and metrics need no auth', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  t.match(
    (await hub.admin('GET', '/health', undefined, null)).body,
    { status: 'ok', role: 'leader', leader: { id: String, url: hub.url, expiresAt: null } },
    'a hub without failover leads, with no lease',
  );
  const metrics = await hub.admin('GET', '/metrics', undefined, null);
  t.equal(metrics.status, 200);
  t.match(metrics.body, /opco_proxy_hub_grants_total/);
  t.match(metrics.body, /opco_proxy_hub_wait_seconds/);
  t.match(metrics.body, /opco_proxy_hub_leader 1/);
});

t.test('the admin API refuses a missing or wrong bearer with 403 HTTP_ERROR', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  for (const [token, what] of [
    [null, 'no header'],
    ['wrong', 'wrong key'],
    [`${ADMIN_KEY}x`, 'the key and more'],
    [ADMIN_KEY.slice(0, -1), 'a prefix'],
  ] as const) {
    const answer = await hub.admin('GET', '/admin/keys', undefined, token);
    t.equal(answer.status, 403, what);
    t.equal(answer.body.status, 'error');
    t.equal(answer.body.code, 'HTTP_ERROR');
    t.type(answer.body.description, 'string');
  }
  t.equal(
    (await hub.admin('GET', '/admin/nothing-here', undefined, null)).status,
    403,
    'unknown admin paths too: no route map for strangers',
  );
  const unknown = await hub.admin('GET', '/admin/nothing-here');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'NOT_FOUND');
  t.equal((await hub.admin('GET', '/elsewhere', undefined, null)).body.code, 'NOT_FOUND');
});

t.test('keys: created once with the key shown, stored as a hash, listed without it, deleted', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const created = await hub.admin('POST', '/admin/keys', { fleetId: 'publisher-1', name: 'api-1' });
  t.equal(created.status, 201);
  t.match(created.body, {
    id: String,
    fleetId: 'publisher-1',
    name: 'api-1',
    key: /^hk_[0-9a-f]{64}$/,
    createdAt: /^\d{4}-\d\d-\d\dT.*Z$/,
  });
  const stored = await hub.store.collection('hub_keys').find({});
  t.equal(stored.length, 1);
  t.notOk(JSON.stringify(stored).includes(created.body.key), 'the key itself is not stored');
  t.equal((stored[0] as any).keyHash, sha256Hex(created.body.key), 'only its sha256');

  await hub.admin('POST', '/admin/keys', { fleetId: 'publisher-2', name: 'worker-1' });
  const listed = await hub.admin('GET', '/admin/keys');
  t.equal(listed.status, 200);
  t.same(
    listed.body.map((k: any) => Object.keys(k).sort()),
    [
      ['createdAt', 'fleetId', 'id', 'name'],
      ['createdAt', 'fleetId', 'id', 'name'],
    ],
    'never the key or its hash',
  );

  const deleted = await hub.admin('DELETE', `/admin/keys/${created.body.id}`);
  t.same(deleted.body, { deleted: true, id: created.body.id, closedConnections: 0 });
  t.equal((await hub.admin('GET', '/admin/keys')).body.length, 1);
  const again = await hub.admin('DELETE', `/admin/keys/${created.body.id}`);
  t.equal(again.status, 404);
  t.equal(again.body.code, 'NOT_FOUND');
  t.equal((await hub.admin('DELETE', '/admin/keys/unknown')).status, 404);
});

t.test('the previous version: a key body naming tenantId, and keys it stored, are fleets', async (t) => {
  const logs: string[] = [];
  const hub = await startTestHub({ logs });
  t.teardown(() => hub.close());
  const created = await hub.admin('POST', '/admin/keys', { tenantId: 'publisher-old', name: 'api-old' });
  t.equal(created.status, 201);
  t.match(created.body, { fleetId: 'publisher-old', name: 'api-old' });
  t.notOk('tenantId' in created.body, 'answered with the new name only');
  t.ok(
    logs.some((line) => line.includes('tenantId is deprecated, send fleetId')),
    'with a deprecation warning in the log',
  );
  // A key record as the previous version wrote it.
  await hub.store.collection('hub_keys').insertOne({
    _id: 'old-key',
    tenantId: 'publisher-older',
    name: 'api-1',
    keyHash: sha256Hex('hk_old'),
    createdAt: new Date(0),
  } as never);
  const listed = (await hub.admin('GET', '/admin/keys')).body as any[];
  t.match(
    listed.find((k) => k.id === 'old-key'),
    { fleetId: 'publisher-older', name: 'api-1' },
  );
  const stored = (await hub.store.collection('hub_keys').find({ _id: created.body.id })) as any[];
  t.same([stored[0].fleetId, stored[0].tenantId], ['publisher-old', undefined], 'new records are written with fleetId');
});

t.test('key bodies are validated: 400 VALIDATION_ERROR with one entry per problem', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const cases: Array<[unknown, string[]]> = [
    [{}, ['fleetId: Required', 'name: Required']],
    [
      { fleetId: 'has space', name: '' },
      [
        'fleetId: must be 1-128 letters, digits or _.:-',
        'name: must be 1-200 characters, not only spaces, without control characters',
      ],
    ],
    [{ fleetId: 'p', name: 'n', role: 'admin' }, ['role: Unrecognized field']],
    [[], ['body: Expected object']],
    [{ fleetId: 'p', tenantId: 'p', name: 'n' }, ["body: give fleetId (or the previous version's tenantId), not both"]],
    ['{not json', ['body: is not valid JSON']],
  ];
  for (const [body, errors] of cases) {
    const answer = await hub.admin('POST', '/admin/keys', body);
    t.equal(answer.status, 400);
    t.same(answer.body, { status: 'error', code: 'VALIDATION_ERROR', description: 'invalid request body', errors });
  }
  t.equal((await hub.admin('GET', '/admin/keys')).body.length, 0);
});

t.test('reload without a config file is a 409; views start empty', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const reload = await hub.admin('POST', '/admin/reload');
  t.equal(reload.status, 409);
  t.equal(reload.body.code, 'CONFLICT');
  t.same((await hub.admin('GET', '/admin/instances')).body, []);
  t.match((await hub.admin('GET', '/admin/limits')).body, { role: 'leader', leader: { url: hub.url }, limits: [] });
});

t.test('start-up stops on a missing or malformed secret, naming it and never showing it', async (t) => {
  const store = await createEmbeddedStore();
  t.teardown(() => store.close());
  const config = parseHubConfig({ port: 0, host: '127.0.0.1' });
  const cases: Array<[NodeJS.ProcessEnv, RegExp]> = [
    [{ OPCO_PROXY_HUB_ADMIN_KEY: ADMIN_KEY }, /OPCO_PROXY_HUB_SECRET: required/],
    [{ ...HUB_ENV, OPCO_PROXY_HUB_SECRET: 'abc123' }, /OPCO_PROXY_HUB_SECRET: must be 64 hex characters/],
    [{ OPCO_PROXY_HUB_SECRET: SECRET }, /OPCO_PROXY_HUB_ADMIN_KEY: required/],
    [
      { ...HUB_ENV, OPCO_PROXY_HUB_ADMIN_KEY: 'short-admin-key' },
      /OPCO_PROXY_HUB_ADMIN_KEY: must be at least 32 characters/,
    ],
  ];
  for (const [env, message] of cases) {
    const failure = await startHub({ config, env, store }).then(
      () => undefined,
      (err: Error) => err,
    );
    t.match(failure?.message, message);
    t.notOk(
      failure?.message.includes('abc123') || failure?.message.includes('short-admin-key'),
      'the value is not shown',
    );
  }
});

t.test(
  'the config file: checked key by key; runHub reads it, PORT overrides, the embedded store persists',
  async (t) => {
    t.throws(
      () => parseHubConfig({ opcos: { op: { rateLimit: { limit: 0, windowMs: 1000 } } } }),
      /opcos\.op\.rateLimit\.limit: Must be greater than or equal to 1/,
    );
    t.throws(
      () => parseHubConfig({ store: { type: 'redis' } }),
      /store\.type: Invalid enum value, expected one of embedded, mongodb/,
    );
    t.throws(() => parseHubConfig({ prot: 1 }), /prot: Unrecognized field/);
    t.throws(() => parseHubConfig({ adaptive: { decreaseFactor: 2 } }), /adaptive\.decreaseFactor/);
    t.throws(() => parseHubConfig({ unprovenShare: 0 }), /unprovenShare: Must be greater than 0/);
    t.throws(() => parseHubConfig({ unprovenShare: 1.5 }), /unprovenShare: Must be less than or equal to 1/);
    t.throws(
      () => parseHubConfig({ port: 'x', logLevel: 'loud' }),
      /invalid hub configuration \(2 problems\):\n {2}port: Expected integer\n {2}logLevel: Invalid enum value/,
      'every problem at once',
    );
    t.equal(parseHubConfig({ unprovenShare: 0.25 }).unprovenShare, 0.25);
    t.match(parseHubConfig({}), {
      port: 8090,
      host: '0.0.0.0',
      issuer: 'opco-proxy-hub',
      store: { type: 'embedded' },
      opcos: {},
      unprovenShare: 0.1,
    });

    const dir = await mkdtemp(join(tmpdir(), 'hub-config-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'hub.json');
    await writeFile(
      file,
      JSON.stringify({
        port: 1,
        host: '127.0.0.1',
        store: { type: 'embedded', path: join(dir, 'data') },
        opcos: { op: { rateLimit: { limit: 5, windowMs: 60000 } } },
      }),
    );
    const env = { ...HUB_ENV, PORT: '0' };
    const first = await runHub(file, env, { log: logInto([]) });
    t.not(first.port, 1, 'PORT overrides the file');
    const created = await fetch(`${first.url}/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({ fleetId: 'p', name: 'n' }),
    });
    t.equal(created.status, 201);
    await first.close();
    const second = await runHub(file, env, { log: logInto([]) });
    t.teardown(() => second.close());
    const listed = (await (
      await fetch(`${second.url}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).json()) as unknown[];
    t.equal(listed.length, 1, 'keys survive a restart with a store path');
    await t.rejects(runHub(join(dir, 'missing.json'), env), /cannot be read/);
  },
);
