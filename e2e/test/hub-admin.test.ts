// The hub process's own surface (D26, D28): admin API refusals, then the backoff of an address
// sending wrong admin keys (issue 27), hub keys checked at the WebSocket upgrade (unknown and
// deleted keys never get a 101, a deleted key's connection is closed), POST /admin/reload
// lowering a limit at once, and no secret in any log line or stored document.
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbeddedStore, type Store } from '@opco-proxy/core';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  clientLoad,
  eventually,
  maxInWindow,
  startInstanceGroup,
  startHubProcess,
  tryUpgrade,
  waitConnected,
  HUB_ADMIN_KEY,
  HUB_SECRET,
  type GroupMember,
  type UpstreamCall,
} from '../src/index.js';

const RATE = { limit: 6, windowMs: 2000 };
const W = RATE.windowMs;

const tempDir = (label: string) => mkdtempSync(join(tmpdir(), `opco-${label}-`));
const hubStoreDir = tempDir('hub-store');
const upstream = await startSandbox({ dossierCount: 20, factureCount: 5, hubSecret: HUB_SECRET });
// Every refusal of the first case comes from 127.0.0.1: 35 wrong keys in a row before the address
// backs off, and tokens enough for them and the refused upgrades of the second case.
const FREE_FAILURES = 35;
const hub = await startHubProcess({
  opcos: { sandbox: RATE },
  store: { type: 'embedded', path: hubStoreDir },
  addressRateLimit: { freeFailures: FREE_FAILURES, burst: 100 },
});
const instanceLogs: string[] = [];
const instanceStores: Array<{ dir: string; store: Store }> = [];
const hubKeys: string[] = [];
t.teardown(async () => {
  await hub.stop();
  await upstream.close();
  for (const { store } of instanceStores) await store.close();
});

/** Instances whose stores keep files, so that the last test can read every stored document. */
async function groupOf(t: Test, fleetId: string, names: string[]) {
  const dir = tempDir('instance-store');
  const store = await createEmbeddedStore({ path: dir });
  instanceStores.push({ dir, store });
  const group = await startInstanceGroup({
    hub,
    upstream,
    rateLimit: RATE,
    logs: instanceLogs,
    stores: { [fleetId]: store },
    members: names.map((name) => ({ name, fleetId, expectedInstances: names.length })),
  });
  hubKeys.push(...group.members.map((m: GroupMember) => m.hubKey));
  t.teardown(() => group.close());
  return group;
}

t.test(
  'the admin API refuses a missing, wrong or non-Bearer admin key with 403 HTTP_ERROR, then backs the address off with 429',
  async (t) => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/admin/keys'],
      ['POST', '/admin/keys', { fleetId: 'x', name: 'y' }],
      ['DELETE', '/admin/keys/some-id'],
      ['GET', '/admin/instances'],
      ['GET', '/admin/limits'],
      ['POST', '/admin/reload'],
      ['GET', '/admin/no-such-route'],
    ];
    const wrong = [
      null,
      'Bearer wrong-admin-key-0123456789-0123456789',
      `Basic ${HUB_ADMIN_KEY}`,
      `Bearer ${HUB_ADMIN_KEY.slice(0, -1)}`,
      `bearer ${HUB_ADMIN_KEY}`,
    ];
    for (const [method, path, body] of routes) {
      for (const authorization of wrong) {
        const reply = await hub.admin(method, path, body, authorization);
        t.equal(
          reply.status,
          403,
          `${method} ${path} with ${authorization === null ? 'no Authorization' : authorization.split(' ')[0] + ' …'}`,
        );
        t.match(reply.body, { status: 'error', code: 'HTTP_ERROR', description: String });
      }
    }
    t.equal(routes.length * wrong.length, FREE_FAILURES);
    // Past the free failures the address backs off, 1 s, then 2 s…: a wrong key sent within it is
    // refused unread (one sent after it, on a slow machine, is compared and starts the next one).
    let answer = await hub.admin('GET', '/admin/keys', undefined, 'Bearer one-more-wrong-key-0123456789');
    t.equal(answer.status, 403, 'one more: still compared and refused; the backoff starts');
    for (let tries = 0; tries < 10 && answer.status !== 429; tries++)
      answer = await hub.admin('GET', '/admin/keys', undefined, 'Bearer one-more-wrong-key-0123456789');
    t.match(
      answer,
      { status: 429, body: { status: 'error', code: 'RATE_LIMITED', description: String } },
      "then 429 in the service's error shape",
    );
    t.ok(Number(answer.headers.get('retry-after')) >= 1, 'with Retry-After');
    await eventually(
      async () => (await hub.admin('GET', '/admin/keys')).status === 200,
      'the right key to work once the backoff is over',
      20_000,
    );
    t.same((await hub.admin('GET', '/admin/keys')).body, [], 'nothing was created by a refused call');
    t.equal((await hub.admin('GET', '/health', undefined, null)).status, 200, '/health needs no key');
    const invalid = await hub.admin('POST', '/admin/keys', { fleetId: 'bad fleet id', name: '' });
    t.equal(invalid.status, 400);
    t.match(invalid.body, { code: 'VALIDATION_ERROR', errors: [/fleetId/, /name/] });
    const created = await hub.key('listing', 'api-1');
    hubKeys.push(created.key);
    t.match(created, { id: String, fleetId: 'listing', name: 'api-1', key: /^hk_[0-9a-f]{64}$/, createdAt: String });
    const listed = (await hub.admin('GET', '/admin/keys')).body;
    t.same(
      Object.keys(listed[0]).sort(),
      ['createdAt', 'fleetId', 'id', 'name'],
      'GET /admin/keys shows no key and no hash',
    );
    t.equal((await hub.admin('DELETE', '/admin/keys/no-such-id')).status, 404);
  },
);

t.test(
  'keys at the upgrade: unknown and deleted keys never get a 101; deleting a key closes its connection',
  async (t) => {
    t.match(await tryUpgrade(hub.url, undefined), { status: 401, body: { code: 'HTTP_ERROR' } }, 'no key');
    t.match(
      await tryUpgrade(hub.url, `hk_${'0'.repeat(64)}`),
      { status: 401, body: { code: 'HTTP_ERROR' } },
      'unknown key',
    );
    const group = await groupOf(t, 'keys', ['keys-api-1', 'keys-api-2']);
    const [kept, dropped] = group.members as [GroupMember, GroupMember];
    const deleted = await hub.admin('DELETE', `/admin/keys/${dropped.keyId}`);
    t.match(deleted, { status: 200, body: { deleted: true, id: dropped.keyId, closedConnections: 1 } });
    await waitConnected(hub, 1);
    t.match(
      (await hub.admin('GET', '/admin/instances')).body,
      [{ name: kept.name }],
      'only the instance with a live key is connected',
    );
    t.match(
      await tryUpgrade(hub.url, dropped.hubKey),
      { status: 403, body: { code: 'HTTP_ERROR' } },
      'the deleted key is refused at the upgrade',
    );
    t.equal((await tryUpgrade(hub.url, kept.hubKey)).status, 101, 'the other key still opens');

    // The instance whose key was deleted keeps serving, from its local share.
    const reply = await dropped.service.get('/sandbox/dossiers/etats?numeroPage=1');
    t.equal(reply.status, 200);
    const [call] = group.calls((c) => c.instance === dropped.name);
    t.equal(call?.token, 'DISCONNECTED', 'its upstream call says DISCONNECTED');
    t.equal((await kept.service.get('/sandbox/dossiers/etats?numeroPage=2')).status, 200);
    t.equal(
      group.calls((c) => c.instance === kept.name)[0]?.hubToken?.valid,
      true,
      'the other instance still gets grants',
    );
  },
);

t.test('POST /admin/reload lowering the limit takes effect at once', async (t) => {
  const group = await groupOf(t, 'reload', ['reload-api-1']);
  const limitsOf = async () =>
    ((await hub.admin('GET', '/admin/limits')).body.limits as any[]).find((v) => v.fleetId === 'reload');
  let stop = false;
  const load = clientLoad(group.members[0].service, { concurrency: 2 * RATE.limit, stop: () => stop });
  await eventually(
    () => group.calls().filter((c) => c.fleetId === 'reload').length > 2 * RATE.limit,
    'two windows at the full limit',
    20_000,
  );

  hub.rewrite({ opcos: { sandbox: { limit: 2, windowMs: W } }, store: { type: 'embedded', path: hubStoreDir } });
  const reloaded = await hub.admin('POST', '/admin/reload');
  const reloadedAt = Date.now();
  t.match(reloaded, { status: 200, body: { status: 'reloaded', opcos: { sandbox: { limit: 2, windowMs: W } } } });
  t.match(await limitsOf(), { configuredLimit: 2, effectiveLimit: 2 }, 'GET /admin/limits shows the new limit at once');
  // Held to the new limit: the calls whose grant the hub issued after it answered the reload, told
  // by the grant's own `iat` (whole seconds, never after the issue), not by when the call arrived:
  // a grant issued just before the reload may reach the upstream any time later on a slow machine.
  const grantedAfter = (c: UpstreamCall) =>
    c.fleetId === 'reload' && (c.hubToken?.claims?.iat ?? Infinity) * 1000 >= reloadedAt;
  await eventually(() => group.calls(grantedAfter).length >= 5, 'calls under the new limit', 20_000);
  const after = group.calls(grantedAfter).map((c) => c.at);
  t.equal(maxInWindow(after, W), 2, `no window after the reload holds more than the new limit (${after.length} calls)`);

  hub.rewrite({ opcos: { sandbox: { limit: 'many' as unknown as number, windowMs: W } } });
  const refused = await hub.admin('POST', '/admin/reload');
  t.match(
    refused,
    { status: 400, body: { code: 'VALIDATION_ERROR', errors: [/opcos\.sandbox\.rateLimit\.limit/] } },
    'an invalid file is refused',
  );
  t.match(await limitsOf(), { configuredLimit: 2 }, 'and the running limits stay');
  hub.rewrite({ opcos: { sandbox: RATE }, store: { type: 'embedded', path: hubStoreDir } });
  t.equal((await hub.admin('POST', '/admin/reload')).status, 200);
  t.match(await limitsOf(), { configuredLimit: RATE.limit, effectiveLimit: RATE.limit }, 'raised back the same way');
  stop = true;
  t.ok(
    (await load).every((s) => s === 200),
    'every client GET was answered',
  );
});

t.test('no secret in any log line or stored document', async (t) => {
  t.ok(hubKeys.length >= 4, `${hubKeys.length} hub keys were used`);
  const secrets: Array<[string, string]> = [
    ['the signing secret', HUB_SECRET],
    ['the admin key', HUB_ADMIN_KEY],
    ...hubKeys.map((key, i): [string, string] => [`hub key #${i + 1}`, key]),
  ];
  const hubLog = hub.output();
  const instanceLog = instanceLogs.join('\n');
  t.ok(
    hubLog.includes('instance connected to the hub') && instanceLog.includes('connected to the hub'),
    'both sides logged (at debug level)',
  );
  const hubStored = filesUnder(hubStoreDir);
  const instanceStored = instanceStores.map(({ dir }) => filesUnder(dir)).join('\n');
  for (const [what, secret] of secrets) {
    t.notOk(hubLog.includes(secret), `${what} is not in the hub's log`);
    t.notOk(instanceLog.includes(secret), `${what} is not in the instances' logs`);
    t.notOk(hubStored.includes(secret), `${what} is not in the hub's store`);
    t.notOk(instanceStored.includes(secret), `${what} is not in the instances' stores`);
  }
  for (const key of hubKeys)
    t.ok(hubStored.includes(createHash('sha256').update(key).digest('hex')), 'the hub stores a key as its SHA-256');
  t.notMatch(hubLog + instanceLog, /eyJ[\w-]+\.eyJ[\w-]+\./, 'no grant token is logged either');
});

/** Every file under `dir`, as one text. */
function filesUnder(dir: string): string {
  return readdirSync(dir)
    .map((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : readFileSync(path, 'utf8');
    })
    .join('\n');
}
