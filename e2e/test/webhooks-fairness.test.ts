// Issue 38 point 4, fair deliveries: one tenant's receivers that never answer do not delay
// another tenant's deliveries. Tenant A points 20 webhooks at 4 receivers that accept connections
// and never answer, and sends 64 test notifications; tenant B's test notification must still
// arrive within a second, then and while A's attempts time out and are retried. Before the
// change, B's took 39.5 s (the measure): every delivery slot was A's for 10 s each.
// Also: POST /webhooks/{id}/test is limited per tenant (429 RATE_LIMITED with Retry-After).
import t from 'tap';
import { startService, startReceiver, type Service } from '../src/index.js';
import { startDeadReceiver, type DeadReceiver } from '../src/dead-receiver.js';

const BEFORE_MS = 39_500;
const KEY_A = 'fairness-tenant-a-key';
const KEY_B = 'fairness-tenant-b-key';

/** The default `webhooks.concurrency`, and what one tenant may hold of it: all but the quarter kept for tenants with nothing in flight. */
const SLOTS = 32;
const HELD_BY_ONE = SLOTS - SLOTS / 4;

async function hook(service: Service, key: string, callbackUrl: string): Promise<string> {
  const reply = await service.request('POST', '/webhooks', { key, body: { callbackUrl, events: ['job.completed'] } });
  if (reply.status !== 201) throw new Error(reply.text);
  return reply.body.id as string;
}

t.test("a tenant's dead receivers delay another tenant's delivery by less than a second", async (t) => {
  // Default delivery settings (32 slots, 3 s / 5 s / 10 s deadlines); only the test rate is
  // raised, so that A's 64 tests all reach the delivery path.
  const service = await startService({ config: { webhooks: { testsPerMinute: 1000 } } });
  const dead: DeadReceiver[] = await Promise.all(Array.from({ length: 4 }, () => startDeadReceiver()));
  const live = await startReceiver();
  t.teardown(async () => {
    await service.close();
    await Promise.all([...dead.map((d) => d.close()), live.close()]);
  });
  const hooksA: string[] = [];
  for (let i = 0; i < 20; i++) hooksA.push(await hook(service, KEY_A, `${dead[i % 4].url}/hook-${i}`));
  const hookB = await hook(service, KEY_B, `${live.url}/b`);

  // 16 requests at a time: a client's connections at once are bounded too.
  const burst = [];
  for (let i = 0; i < 64; i += 16) {
    burst.push(
      ...(await Promise.all(
        Array.from({ length: 16 }, (_, j) =>
          service.request('POST', `/webhooks/${hooksA[(i + j) % 20]}/test`, { key: KEY_A }),
        ),
      )),
    );
  }
  t.same([...new Set(burst.map((r) => r.status))], [202], "A's 64 tests are all accepted");
  const openA = () => dead.reduce((sum, d) => sum + d.open(), 0);
  // A's attempts are under way: its receivers hold connections that will never be answered.
  for (let i = 0; i < 100 && openA() < HELD_BY_ONE; i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(openA() >= HELD_BY_ONE, `A's deliveries reached its dead receivers (${openA()} connections open)`);

  const sendB = async (label: string) => {
    const before = live.received.length;
    const startedAt = Date.now();
    const reply = await service.request('POST', `/webhooks/${hookB}/test`, { key: KEY_B });
    t.equal(reply.status, 202);
    await live.waitFor(before + 1, 15_000);
    const tookMs = live.received[before].at - startedAt;
    t.ok(tookMs < 1000, `${label}: B's test arrived in ${tookMs} ms (A: ${openA()} attempts open)`);
    return tookMs;
  };
  const figures: number[] = [];
  figures.push(await sendB("right after A's burst"));
  t.ok(openA() <= HELD_BY_ONE, `A holds at most ${HELD_BY_ONE} of the ${SLOTS} slots (${openA()} open)`);
  // While A's first attempts reach the 5 s headers deadline, fail, and the next ones start.
  const burstAt = Date.now();
  for (const atMs of [3_000, 5_500, 8_000]) {
    await new Promise((r) => setTimeout(r, atMs - (Date.now() - burstAt)));
    figures.push(await sendB(`${atMs / 1000} s later`));
  }
  const accepted = dead.reduce((sum, d) => sum + d.accepted(), 0);
  t.ok(accepted > HELD_BY_ONE, `A's attempts go on, bounded: ${accepted} connections to its dead receivers so far`);
  const logs = await service.get(`/webhooks/${hooksA[0]}/logs`, { key: KEY_A });
  t.ok(
    logs.body.some((l: { error: string | null }) => l.error === 'no answer within 5000 ms'),
    "A's attempts end at the 5 s headers deadline",
  );
  t.comment(
    `B's test delivery behind A's 64 tests to dead receivers: before ${BEFORE_MS} ms (issue 38); after ${figures.join(' / ')} ms (max ${Math.max(...figures)} ms)`,
  );
});

t.test('POST /webhooks/{id}/test: 10 a minute per tenant, then 429 RATE_LIMITED with Retry-After', async (t) => {
  const service = await startService();
  const live = await startReceiver();
  t.teardown(async () => {
    await service.close();
    await live.close();
  });
  const mine = await hook(service, KEY_A, `${live.url}/a`);
  const theirs = await hook(service, KEY_B, `${live.url}/b`);
  const unknown = await service.request('POST', '/webhooks/no-such-webhook/test', { key: KEY_A });
  t.equal(unknown.status, 404, 'a webhook the tenant does not have: 404, no token spent');
  for (let i = 0; i < 10; i++) {
    const reply = await service.request('POST', `/webhooks/${mine}/test`, { key: KEY_A });
    t.equal(reply.status, 202, `test ${i + 1} accepted`);
  }
  const refused = await service.request('POST', `/webhooks/${mine}/test`, { key: KEY_A });
  t.equal(refused.status, 429);
  t.match(refused.body, { status: 'error', code: 'RATE_LIMITED', description: /10 test notifications a minute/ });
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.ok(retryAfter >= 1 && retryAfter <= 6, `Retry-After: ${retryAfter} s (a token every 6 s)`);
  t.equal(
    (await service.request('POST', `/webhooks/${theirs}/test`, { key: KEY_B })).status,
    202,
    'another tenant has its own',
  );
  await live.waitFor(11, 10_000);
  t.equal(
    live.received.filter((r) => r.path === '/a').length,
    10,
    'the ten accepted tests were delivered, the refused one never',
  );
});
