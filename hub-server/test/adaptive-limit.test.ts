// The adaptive limit (SPEC 1.1 step 9, D29), driven by advancing a TestClock: upstream 429s and a
// rising error rate lower the effective limit multiplicatively, never below 10% of the configured
// limit; windows without 429s raise it back step by step; grants follow it at once.
import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import type { MetricsReport } from '@opco-proxy/plugin-hub';
import { AdaptiveLimit, GrantScheduler, type IssuedGrant } from '../src/index.js';

const STEP_MS = 5000;

function setup(t: { teardown(fn: () => void): void }, limit = 100) {
  const clock = new TestClock();
  const scheduler = new GrantScheduler({
    clock,
    opcos: { op: { limit, windowMs: 60_000 } },
    startedAt: clock.now() - 600_000,
    adaptive: { intervalMs: STEP_MS },
  });
  t.teardown(() => scheduler.close());
  scheduler.connect('pub', 'i1', { expectedInstances: 2, limits: {}, usage: [], complete: true });
  scheduler.connect('pub', 'i2', { expectedInstances: 2, limits: {}, usage: [], complete: true });
  const effective = () => scheduler.limits().find((v) => v.opcoId === 'op')?.effectiveLimit;
  const report = (instanceId: string, window: Partial<MetricsReport>) =>
    scheduler.observe('pub', instanceId, {
      op: { requests: 50, errors: 0, rateLimited: 0, averageLatencyMs: 120, ...window },
    });
  // A budget exists once someone asked for it.
  scheduler.ask(
    'pub',
    {
      askId: 'x',
      instanceId: 'i1',
      opcoId: 'op',
      method: 'GET',
      route: 'r',
      priority: 5,
      tenant: 't',
      rateLimit: { limit, windowMs: 60_000 },
    },
    () => undefined,
  );
  return { clock, scheduler, effective, report, step: () => clock.advance(STEP_MS) };
}

t.test('429s halve the limit, down to 10% of the configured limit and no further', async (t) => {
  const { effective, report, step } = setup(t);
  t.equal(effective(), 100);
  report('i1', { rateLimited: 2 });
  await step();
  t.equal(effective(), 50, 'new 429s: halved');
  report('i1', { rateLimited: 2 });
  await step();
  t.equal(effective(), 50, 'the same 429s still in the 60 s window are not new: held, not lowered again');
  report('i2', { rateLimited: 1 });
  await step();
  t.equal(effective(), 25, 'a new 429 from another instance of the fleet');
  for (let i = 0; i < 5; i++) {
    report('i2', { rateLimited: 2 + i });
    await step();
  }
  t.equal(effective(), 10, 'floor: 10% of the configured limit');
});

t.test('windows without 429s raise the limit back step by step to the configured limit', async (t) => {
  const { effective, report, step } = setup(t);
  report('i1', { rateLimited: 1 });
  await step();
  report('i1', { rateLimited: 3 });
  await step();
  t.equal(effective(), 25);
  await step();
  t.equal(effective(), 25, 'held while a 429 is still in a reported window');
  report('i1', { rateLimited: 0 });
  const seen: number[] = [];
  for (let i = 0; i < 10; i++) {
    await step();
    seen.push(effective()!);
  }
  t.same(seen, [35, 45, 55, 65, 75, 85, 95, 100, 100, 100], '+10% of the configured limit per step, capped');
});

t.test('a rising error rate lowers the limit; a high but steady one holds it; a low one lets it climb', async (t) => {
  const { effective, report, step } = setup(t);
  report('i1', { requests: 100, errors: 30 });
  await step();
  t.equal(effective(), 50, '30% errors, up from 0%');
  report('i1', { requests: 100, errors: 40 });
  await step();
  t.equal(effective(), 25, 'still rising');
  await step();
  t.equal(effective(), 25, 'high but not rising: held');
  report('i1', { requests: 100, errors: 5 });
  await step();
  t.equal(effective(), 35, 'under the threshold: climbs');
  report('i1', { requests: 5, errors: 5 });
  await step();
  t.equal(effective(), 45, 'too few requests to judge an error rate');
});

t.test('the effective limit bounds the grants at once', async (t) => {
  const { scheduler, report, step } = setup(t, 10);
  report('i1', { rateLimited: 1 });
  await step();
  const granted: IssuedGrant[] = [];
  for (let i = 0; i < 10; i++) {
    scheduler.ask(
      'pub',
      {
        askId: `a${i}`,
        instanceId: 'i2',
        opcoId: 'op',
        method: 'GET',
        route: 'r',
        priority: 5,
        tenant: 't',
        rateLimit: { limit: 10, windowMs: 60_000 },
      },
      (g) => granted.push(g),
    );
  }
  t.equal(granted.length + 1, 5, 'effective limit 5 (one slot was already held)');
  t.match(scheduler.limits()[0], { configuredLimit: 10, effectiveLimit: 5, waiting: 6 });
});

t.test('a disconnected instance no longer speaks for the upstream', async (t) => {
  const { scheduler, effective, report, step } = setup(t);
  report('i1', { rateLimited: 1 });
  await step();
  t.equal(effective(), 50);
  scheduler.disconnect('pub', 'i1');
  await step();
  t.equal(effective(), 60, 'its window with a 429 is forgotten, the limit climbs');
});

t.test('reload: an unadapted limit follows the new configured limit, an adapted one is clamped', async (t) => {
  const limit = new AdaptiveLimit(100);
  limit.setConfigured(40);
  t.equal(limit.effective, 40);
  limit.observe('i', { requests: 10, errors: 0, rateLimited: 1, averageLatencyMs: 1 });
  limit.step();
  t.equal(limit.effective, 20);
  limit.setConfigured(200);
  t.equal(limit.effective, 20, 'adapted: keeps its place');
  t.equal(limit.floor, 20);
  limit.setConfigured(10);
  t.equal(limit.effective, 10, 'clamped under the new configured limit');
});

t.test(
  'a flood of refused CFA keys is the upstream working: many requests without errors keep the configured limit',
  async (t) => {
    // Since issue 27 the kernel's 60-second window counts a 403 on a CFA's key (or a 4xx about the
    // client's input) as an answer, not an error (core's call-verdict.ts): during a flood of
    // invented keys an instance reports many requests and no errors.
    const { effective, report, step } = setup(t);
    for (let i = 1; i <= 12; i++) {
      report('i1', { requests: 1000 * i, errors: 0 });
      report('i2', { requests: 400 * i, errors: 0 });
      await step();
    }
    t.equal(effective(), 100, 'held at the configured limit for a whole minute of refused keys');
    report('i1', { requests: 13_000, errors: 13_000 });
    await step();
    t.equal(effective(), 50, 'the same flood counted as errors, as the window counted it before, would have halved it');
  },
);

t.test('a lowered limit climbs back while refused keys keep coming', async (t) => {
  const limit = new AdaptiveLimit(60);
  limit.observe('i', { requests: 100, errors: 0, rateLimited: 1, averageLatencyMs: 5 });
  t.equal(limit.step(), 'decreased');
  t.equal(limit.effective, 30);
  limit.observe('i', { requests: 5000, errors: 0, rateLimited: 0, averageLatencyMs: 5 });
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    limit.step();
    seen.push(limit.effective);
  }
  t.same(seen, [36, 42, 48, 54, 60, 60], '+10% a step, up to the configured limit');
});
