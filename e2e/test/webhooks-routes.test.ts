// SPEC 4.15, D9: create (secret once), list without secret, PATCH, DELETE, logs, tenant isolation.
import t from 'tap';
import { startService, KEY_A, KEY_B } from '../src/index.js';

const service = await startService();
t.teardown(() => service.close());
const hook = (body: unknown, key = KEY_A) => service.request('POST', '/webhooks', { key, body });

t.test('create answers 201 with a 64-hex secret shown only then', async (t) => {
  const reply = await hook({
    callbackUrl: 'http://127.0.0.1:9/hook',
    events: ['job.completed', 'job.failed'],
    description: 'ERP',
  });
  t.equal(reply.status, 201, reply.text);
  t.match(reply.body.secret, /^[0-9a-f]{64}$/);
  t.match(reply.body, {
    callbackUrl: 'http://127.0.0.1:9/hook',
    events: ['job.completed', 'job.failed'],
    active: true,
    description: 'ERP',
  });
  t.match(reply.body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const list = await service.get('/webhooks');
  t.equal(list.status, 200);
  const listed = list.body.find((w: any) => w.id === reply.body.id);
  t.ok(listed, 'listed');
  t.notOk('secret' in listed, 'no secret in the list');
  t.notOk(list.text.includes(reply.body.secret), 'secret nowhere in the list');
});

t.test('PATCH changes only the supplied fields', async (t) => {
  const created = (await hook({ callbackUrl: 'http://127.0.0.1:9/a', events: ['job.completed'], description: 'first' }))
    .body;
  const patched = await service.request('PATCH', `/webhooks/${created.id}`, { body: { active: false } });
  t.equal(patched.status, 200, patched.text);
  t.same(patched.body, {
    id: created.id,
    callbackUrl: 'http://127.0.0.1:9/a',
    events: ['job.completed'],
    active: false,
    description: 'first',
  });
  const again = await service.request('PATCH', `/webhooks/${created.id}`, {
    body: { events: ['sync.batch'], description: 'second' },
  });
  t.same(again.body, {
    id: created.id,
    callbackUrl: 'http://127.0.0.1:9/a',
    events: ['sync.batch'],
    active: false,
    description: 'second',
  });
  t.equal(
    (await service.request('PATCH', `/webhooks/${created.id}`, { body: { events: ['not.an.event'] } })).status,
    400,
  );
  t.equal(
    (await service.request('PATCH', `/webhooks/${created.id}`, { body: {} })).status,
    400,
    'an empty change is refused',
  );
});

t.test('DELETE answers {deleted: true}; the webhook and its logs are gone', async (t) => {
  const created = (await hook({ callbackUrl: 'http://127.0.0.1:9/d', events: ['job.completed'] })).body;
  const deleted = await service.request('DELETE', `/webhooks/${created.id}`);
  t.equal(deleted.status, 200);
  t.same(deleted.body, { deleted: true });
  t.equal((await service.request('DELETE', `/webhooks/${created.id}`)).status, 404);
  t.equal((await service.get(`/webhooks/${created.id}/logs`)).status, 404);
});

t.test('validation: required fields, known events only, at most 20 per tenant', async (t) => {
  for (const body of [
    {},
    { callbackUrl: 'http://127.0.0.1:9/x' },
    { callbackUrl: 'http://127.0.0.1:9/x', events: [] },
    { callbackUrl: 'http://127.0.0.1:9/x', events: ['job.exploded'] },
    { callbackUrl: 'not a url', events: ['job.completed'] },
  ]) {
    const reply = await hook(body, 'validation-tenant-key');
    t.equal(reply.status, 400, JSON.stringify(body));
    t.equal(reply.body.code, 'VALIDATION_ERROR');
    t.ok(reply.body.errors.length > 0);
  }
  const created = await Promise.all(
    Array.from({ length: 22 }, (_, i) =>
      hook({ callbackUrl: `http://127.0.0.1:9/${i}`, events: ['job.completed'] }, 'twenty-tenant-key'),
    ),
  );
  t.equal(created.filter((r) => r.status === 201).length, 20, 'exactly 20 created, even concurrently');
  const refused = created.filter((r) => r.status === 400);
  t.equal(refused.length, 2);
  t.match(refused[0].body.errors[0], /at most 20/);
});

t.test('a tenant never sees, changes or deletes another tenant webhook', async (t) => {
  const created = (await hook({ callbackUrl: 'http://127.0.0.1:9/iso', events: ['job.completed'] })).body;
  t.notOk((await service.get('/webhooks', { key: KEY_B })).body.some((w: any) => w.id === created.id));
  t.equal(
    (await service.request('PATCH', `/webhooks/${created.id}`, { key: KEY_B, body: { active: false } })).status,
    404,
  );
  t.equal((await service.request('DELETE', `/webhooks/${created.id}`, { key: KEY_B })).status, 404);
  t.equal((await service.get(`/webhooks/${created.id}/logs`, { key: KEY_B })).status, 404);
  t.equal((await service.get(`/webhooks/${created.id}/logs`)).status, 200, 'the owner still can');
  t.equal((await service.get('/webhooks', { key: null })).status, 403);
});
