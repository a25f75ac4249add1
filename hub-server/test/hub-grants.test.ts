// Instances and the hub over real sockets on 127.0.0.1 (D26, D28, D29): keys checked at the
// upgrade, grants as verifiable JWTs, instance and budget views, a deleted key's connection
// closed, reload applied at once, a client GET refused with 429 after maxWaitMs, and no secret
// in any log line.
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { WebSocket } from 'ws';
import { isServiceError, type AdmissionLease } from '@opco-proxy/core';
import { verifyGrantToken } from '../src/index.js';
import { ADMIN_KEY, admissionFor, eventually, request, SECRET, startTestHub } from './fixtures/hub-harness.js';

const RL = { limit: 3, windowMs: 60_000 };

/** What the hub answers to an upgrade: 101, or the status and body of its refusal. */
function upgrade(url: string): Promise<{ status: number; body?: any }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.on('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(body) });
      });
    });
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.on('error', () => undefined);
  });
}

t.test('keys are checked at the upgrade: missing, unknown and deleted keys never get a 101', async (t) => {
  const hub = await startTestHub();
  t.teardown(() => hub.close());
  const ws = hub.url.replace('http', 'ws');
  const { id, key } = await hub.key('pub');
  t.same(await upgrade(`${ws}/ws?apiKey=${key}`), { status: 101 });
  const missing = await upgrade(`${ws}/ws`);
  t.equal(missing.status, 401);
  t.match(missing.body, { status: 'error', code: 'HTTP_ERROR', description: String });
  t.equal((await upgrade(`${ws}/ws?apiKey=hk_${'0'.repeat(64)}`)).status, 401, 'unknown key');
  t.equal((await upgrade(`${ws}/elsewhere?apiKey=${key}`)).status, 404);
  await hub.admin('DELETE', `/admin/keys/${id}`);
  const deleted = await upgrade(`${ws}/ws?apiKey=${key}`);
  t.equal(deleted.status, 403, 'deleted key');
  t.equal(deleted.body.code, 'HTTP_ERROR');
});

t.test('grants: JWTs that verify, carry the claims, and are reported done; views and metrics follow', async (t) => {
  const hubLogs: string[] = [];
  const instanceLogs: string[] = [];
  const hub = await startTestHub({ opcos: { op: RL }, logs: hubLogs });
  t.teardown(() => hub.close());
  const { key } = await hub.key('pub-a', 'api-1');
  const { admission, registry } = admissionFor(hub.url, key, { expectedInstances: 2 }, instanceLogs, 'api-1-instance');
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');

  const lease = await admission.admit(request({ rateLimit: RL, route: 'GET /dossiers/etats' }));
  const token = lease.headers['Svc-Hub-Token'];
  const { payload, protectedHeader } = await jwtVerify(token, new Uint8Array(Buffer.from(SECRET, 'hex')), {
    issuer: 'opco-proxy-hub',
  });
  t.equal(protectedHeader.alg, 'HS256');
  t.match(payload, {
    opcoId: 'op',
    method: 'GET',
    route: 'GET /dossiers/etats',
    instanceId: 'api-1-instance',
    iss: 'opco-proxy-hub',
    jti: /^[0-9a-f]{32}$/,
  });
  t.equal(payload.exp! - payload.iat!, 30, 'exp = iat + 30');
  t.ok(Math.abs(payload.iat! * 1000 - Date.now()) < 5000);
  t.match(await verifyGrantToken(token, SECRET), { opcoId: 'op' });
  await t.rejects(verifyGrantToken(token, 'f'.repeat(64)), 'another secret does not verify it');

  await lease.release({ status: 200, latencyMs: 42 });
  const instances = await eventually(async () => {
    const body = (await hub.admin('GET', '/admin/instances')).body;
    return body[0]?.metrics?.op?.requests === 1 && body;
  }, 'the instance to report its metrics window');
  t.match(instances, [
    {
      instanceId: 'api-1-instance',
      name: 'api-1',
      fleetId: 'pub-a',
      connectedAt: /Z$/,
      metrics: { op: { requests: 1, errors: 0, rateLimited: 0, averageLatencyMs: 42, reportedAt: /Z$/ } },
    },
  ]);
  t.match((await hub.admin('GET', '/admin/limits')).body.limits, [
    {
      fleetId: 'pub-a',
      opcoId: 'op',
      configuredLimit: 3,
      effectiveLimit: 3,
      windowMs: 60_000,
      grantsInWindow: 1,
      waiting: 0,
    },
  ]);

  const hubMetrics = (await hub.admin('GET', '/metrics', undefined, null)).body as string;
  t.match(hubMetrics, /opco_proxy_hub_grants_total\{fleet_id="pub-a",opco="op"\} 1/);
  t.match(hubMetrics, /opco_proxy_hub_effective_limit\{fleet_id="pub-a",opco="op"\} 3/);
  t.match(hubMetrics, /opco_proxy_hub_connected_instances\{fleet_id="pub-a"\} 1/);
  const instanceMetrics = await registry.metrics();
  t.match(instanceMetrics, /opco_proxy_hub_connection_state\{state="connected"\} 1/);
  t.match(instanceMetrics, /opco_proxy_hub_grant_wait_seconds_count\{opco="op",mode="hub"\} 1/);

  // No secret in any log line: signing secret, admin key, hub key, grant token.
  for (const line of [...hubLogs, ...instanceLogs]) {
    for (const secret of [SECRET, ADMIN_KEY, key, token])
      t.notOk(line.includes(secret), `log line leaks a secret: ${line.slice(0, 80)}`);
  }
  t.ok(
    hubLogs.some((line) => line.includes('instance connected to the hub')),
    'logs were captured',
  );
});

t.test('the budget is per fleet: another publisher is served while one is full', async (t) => {
  const hub = await startTestHub({ opcos: { op: { limit: 1, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const a = admissionFor(hub.url, (await hub.key('pub-a')).key).admission;
  const b = admissionFor(hub.url, (await hub.key('pub-b')).key).admission;
  t.teardown(() => Promise.all([a.close(), b.close()]));
  await eventually(() => a.state === 'connected' && b.state === 'connected', 'connections');
  await a.admit(request());
  const waiting = a.admit(request({ synchronous: true }));
  await eventually(
    async () =>
      (await hub.admin('GET', '/admin/limits')).body.limits.find((v: any) => v.fleetId === 'pub-a')?.waiting === 1,
    'pub-a to wait',
  );
  const other = await b.admit(request());
  t.not(other.headers['Svc-Hub-Token'], 'DISCONNECTED', 'pub-b has its own budget');
  const failed = t.rejects(
    waiting,
    { code: 'UNAVAILABLE', message: 'the instance is stopping' },
    'closing the provider fails its waiting asks',
  );
  await a.close();
  await failed;
});

t.test(
  'unproven tenants: the instance says so in its asks, the hub grants them their slice, a proven ask goes past',
  async (t) => {
    const rateLimit = { limit: 10, windowMs: 60_000 };
    const hub = await startTestHub({ opcos: { op: rateLimit } }); // unprovenShare 0.1: a slice of 1
    t.teardown(() => hub.close());
    const { admission } = admissionFor(hub.url, (await hub.key('pub')).key);
    t.teardown(() => admission.close());
    await eventually(() => admission.state === 'connected', 'connection');
    const first = await admission.admit(request({ rateLimit, tenant: 'invented-1', proven: false }));
    t.not(first.headers['Svc-Hub-Token'], 'DISCONNECTED');
    const second = admission.admit(request({ rateLimit, tenant: 'invented-2', proven: false }));
    second.catch(() => undefined); // still waiting when the instance closes
    await eventually(
      async () => (await hub.admin('GET', '/admin/limits')).body.limits[0]?.waiting === 1,
      'the second stranger to wait',
    );
    const proven = await admission.admit(request({ rateLimit, tenant: 'cfa', proven: true }));
    t.not(proven.headers['Svc-Hub-Token'], 'DISCONNECTED', 'granted at once, past the stranger waiting');
    t.match((await hub.admin('GET', '/admin/limits')).body.limits, [
      { occupied: 2, waiting: 1, unproven: { limit: 1, occupied: 1, waiting: 1 } },
    ]);
    t.match(
      admission.describe({ id: 'op', rateLimit, unprovenLimit: 1 }),
      {
        used: 2,
        waiting: 1,
        unproven: { limit: 1, used: null, waiting: 1 },
        hub: { mode: 'hub' },
      },
      "the instance knows its own waiting ask; what the hub granted of the slice is the hub's to say",
    );
  },
);

t.test('a client GET waits at most maxWaitMs, then 429 RATE_LIMITED with Retry-After, its ask cancelled', async (t) => {
  const hub = await startTestHub({ opcos: { op: { limit: 1, windowMs: 60_000 } } });
  t.teardown(() => hub.close());
  const { admission } = admissionFor(hub.url, (await hub.key('pub')).key, { maxWaitMs: 300 });
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');
  await admission.admit(request());
  const refused = await admission.admit(request({ synchronous: true })).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(isServiceError(refused));
  t.match(
    refused,
    { code: 'RATE_LIMITED', status: 429, headers: { 'Retry-After': '20' } },
    'the average spacing under 3 per minute',
  );
  await eventually(
    async () => (await hub.admin('GET', '/admin/limits')).body.limits[0]?.waiting === 0,
    'the cancel to reach the hub',
  );

  let stop = false;
  const background = admission.admit(request({ cancelled: () => stop }));
  await eventually(
    async () => (await hub.admin('GET', '/admin/limits')).body.limits[0]?.waiting === 1,
    'the background ask to wait',
  );
  stop = true;
  await t.rejects(background, { code: 'UNAVAILABLE' }, 'background work stops waiting once cancelled');
  await eventually(
    async () => (await hub.admin('GET', '/admin/limits')).body.limits[0]?.waiting === 0,
    'its cancel to reach the hub',
  );
});

t.test('deleting a key closes its connection; the instance then serves without the hub', async (t) => {
  const hub = await startTestHub({ opcos: { op: RL } });
  t.teardown(() => hub.close());
  const { id, key } = await hub.key('pub');
  const logs: string[] = [];
  const { admission } = admissionFor(hub.url, key, {}, logs);
  t.teardown(() => admission.close());
  await eventually(() => admission.state === 'connected', 'connection');
  const deleted = await hub.admin('DELETE', `/admin/keys/${id}`);
  t.equal(deleted.body.closedConnections, 1);
  await eventually(() => admission.state !== 'connected', 'the connection to close');
  await eventually(
    () => logs.some((line) => line.includes('Unexpected server response: 403')),
    'a reconnection to be refused',
  );
  const lease = await admission.admit(request({ synchronous: true, rateLimit: { limit: 3, windowMs: 200 } }));
  t.equal(lease.headers['Svc-Hub-Token'], 'DISCONNECTED');
  t.same((await hub.admin('GET', '/admin/instances')).body, []);
});

t.test(
  'reload re-reads the config file: a lowered limit applies at once, to waiting asks too; so does a new unprovenShare',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'hub-reload-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'hub.json');
    const write = (limit: number) =>
      writeFile(file, JSON.stringify({ host: '127.0.0.1', opcos: { op: { rateLimit: { limit, windowMs: 60_000 } } } }));
    await write(4);
    const hub = await startTestHub({ opcos: { op: { limit: 4, windowMs: 60_000 } }, configPath: file });
    t.teardown(() => hub.close());
    const { admission } = admissionFor(hub.url, (await hub.key('pub')).key);
    t.teardown(() => admission.close());
    await eventually(() => admission.state === 'connected', 'connection');
    const held: AdmissionLease[] = [await admission.admit(request()), await admission.admit(request())];
    await write(2);
    const reloaded = await hub.admin('POST', '/admin/reload');
    t.same(reloaded.body, { status: 'reloaded', opcos: { op: { limit: 2, windowMs: 60_000 } } });
    const waiting = admission.admit(request());
    const limits = await eventually(async () => {
      const [view] = (await hub.admin('GET', '/admin/limits')).body.limits;
      return view?.waiting === 1 && view;
    }, 'the third ask to wait under the lowered limit');
    t.match(limits, { configuredLimit: 2, effectiveLimit: 2, occupied: 2 });
    await write(3);
    await hub.admin('POST', '/admin/reload');
    held.push(await waiting);
    t.equal(held.length, 3, 'a raised limit serves the waiting ask at once');
    t.match(
      (await hub.admin('GET', '/admin/limits')).body.limits,
      [{ unproven: { limit: 1, occupied: 0, waiting: 0 } }],
      'the unproven slice: 10% of 3, at least one call',
    );
    await writeFile(
      file,
      JSON.stringify({
        host: '127.0.0.1',
        opcos: { op: { rateLimit: { limit: 3, windowMs: 60_000 } } },
        unprovenShare: 0.7,
      }),
    );
    await hub.admin('POST', '/admin/reload');
    t.match(
      (await hub.admin('GET', '/admin/limits')).body.limits,
      [{ unproven: { limit: 2 } }],
      'a new unprovenShare applies at once',
    );
    await writeFile(file, '{"opcos": {"op": {"rateLimit": {"limit": -1}}}}');
    const invalid = await hub.admin('POST', '/admin/reload');
    t.equal(invalid.status, 400);
    t.match(invalid.body, { code: 'VALIDATION_ERROR', errors: [/opcos\.op\.rateLimit\.limit/] });
    t.match((await hub.admin('GET', '/admin/limits')).body.limits, [{ configuredLimit: 3 }], 'the running limits stay');
  },
);
