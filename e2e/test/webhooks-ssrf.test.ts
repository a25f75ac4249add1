// SPEC 5.6, D24 at the routes, in production mode: every forbidden target is refused at
// registration, and a name that turns private after registration is refused at delivery.
import t from 'tap';
import { tenantHash } from '@opco-proxy/core';
import { startService, startReceiver, KEY_A } from '../src/index.js';

const FORBIDDEN = [
  'http://example.com/hook',
  'https://localhost/hook',
  'https://127.0.0.1/hook',
  'https://[::1]/hook',
  'https://10.0.0.8/hook',
  'https://192.168.1.10/hook',
  'https://172.16.0.1/hook',
  'https://172.31.255.255/hook',
  'https://printer.local/hook',
  'https://api.corp.internal/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://2130706433/hook',
  'https://0177.0.0.1/hook',
  'https://0x7f.0.0.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://[fe80::1]/hook',
  'https://[fc00::1]/hook',
  'https://100.64.0.1/hook',
  'https://0.0.0.0/hook',
  'https://private-name.example/hook',
];

let lookups = 0;
const resolveHost = async (hostname: string) => {
  if (hostname === 'private-name.example') return [{ address: '10.1.2.3', family: 4 as const }];
  if (hostname === 'rebind.example')
    return [{ address: lookups++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 as const }];
  return [{ address: '93.184.216.34', family: 4 as const }];
};

const service = await startService({ config: { mode: 'production' }, resolveHost });
t.teardown(() => service.close());

t.test('every forbidden target is refused at registration with a reason', async (t) => {
  for (const callbackUrl of FORBIDDEN) {
    const reply = await service.request('POST', '/webhooks', { body: { callbackUrl, events: ['job.completed'] } });
    t.equal(reply.status, 400, `${callbackUrl}: ${reply.text}`);
    t.equal(reply.body.code, 'VALIDATION_ERROR');
    t.match(reply.body.errors[0], /callbackUrl/);
  }
  const ok = await service.request('POST', '/webhooks', {
    body: { callbackUrl: 'https://hooks.example.com/opco', events: ['job.completed'] },
  });
  t.equal(ok.status, 201, 'a public https target is accepted');
  const patched = await service.request('PATCH', `/webhooks/${ok.body.id}`, {
    body: { callbackUrl: 'https://10.0.0.1/x' },
  });
  t.equal(patched.status, 400, 'PATCH checks the target too');
});

t.test('a name that resolves to 127.0.0.1 at delivery is refused then, not connected to', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const created = await service.request('POST', '/webhooks', {
    body: { callbackUrl: `https://rebind.example:${receiver.port}/hook`, events: ['sync.started'] },
  });
  t.equal(created.status, 201, 'public at registration');
  await service.kernel.emit({
    type: 'sync.started',
    tenant: tenantHash(KEY_A),
    opcoId: 'sandbox',
    data: { syncId: 'x', total: 1 },
  });
  let logs: any[] = [];
  for (let i = 0; i < 100; i++) {
    logs = (await service.get(`/webhooks/${created.body.id}/logs`)).body;
    if (logs[0]?.attempts >= 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(logs[0].attempts, 1);
  t.not(logs[0].status, 'delivered');
  t.match(logs[0].error, /refused target/);
  t.equal(receiver.received.length, 0, 'the receiver on 127.0.0.1 was never reached');
});
