// /metrics must answer when the store hangs (issue 11, the backlog gauge's bounded read): the
// oldest unfinished job is read from the store at most once a second (core/src/observability/store-gauge.ts),
// and a scrape waits for that read 2 s at most on the kernel's clock, then answers with the
// gauge's last value. The store is the real embedded one; only the gauge's searches (the oldest
// pending or processing job) are made to hang, as a store that accepts a command and never
// answers would.
import t from 'tap';
import { createEmbeddedStore, type Collection, type Doc, type Store } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { STORE_GAUGE } from '@opco-proxy/core/application';
import { eventually, send, startService } from '../src/index.js';

/** The embedded store, where the search for the oldest pending job never answers while `hung` holds. */
function withHungGaugeReads(store: Store, state: { hung: boolean; held: number }): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'collection') return Reflect.get(target, property, receiver);
      return <T extends Doc>(name: string): Collection<T> => {
        const collection = target.collection<T>(name);
        if (name !== 'jobs') return collection;
        return new Proxy(collection, {
          get(inner, method, innerReceiver) {
            const value = Reflect.get(inner, method, innerReceiver);
            if (method !== 'find' || typeof value !== 'function') return value;
            return (filter: Record<string, unknown>, options?: { sort?: Record<string, number> }) => {
              if (state.hung && asksPending(filter.status) && options?.sort?.createdAt === 1) {
                state.held += 1;
                return new Promise(() => {});
              }
              return value.call(inner, filter, options);
            };
          },
        });
      };
    },
  });
}

/** `status: 'pending'`, or `status: {$in: [..., 'pending', ...]}` (the unfinished jobs in one search). */
function asksPending(status: unknown): boolean {
  if (status === 'pending') return true;
  const within = (status as { $in?: unknown } | undefined)?.$in;
  return Array.isArray(within) && within.includes('pending');
}

function gauge(text: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith('opco_proxy_oldest_pending_job_age_seconds '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

t.test("a scrape answers after 2 s of the clock with the last value when the gauge's read hangs", async (t) => {
  const store = await createEmbeddedStore({});
  const state = { hung: false, held: 0 };
  const clock = new TestClock({ frozen: true });
  const service = await startService({ store: withHungGaugeReads(store, state), clock });
  t.teardown(async () => {
    await service.close();
    await store.close();
  });
  const scrape = () => send(service.url, 'GET', '/metrics', { key: null });

  const first = await scrape();
  t.equal(first.status, 200);
  t.equal(gauge(first.text), 0, 'no unfinished job: 0');

  state.hung = true;
  // A second on the clock, so the next scrape reads again; the periodic tasks that rang then
  // (the first look for due polls) are back to waiting before the timers are counted.
  const idle = clock.pending();
  await clock.advance(1000);
  await eventually(() => clock.pending() === idle, 'the periodic tasks waiting again');
  let answered: Awaited<ReturnType<typeof scrape>> | undefined;
  const pending = scrape().then((reply) => (answered = reply));
  // The scrape's wait is one more timer on the kernel's clock: its 2 s bound.
  await eventually(
    () => state.held === 1 && clock.pending() === idle + 1,
    'the read sent and the scrape waiting on its bound',
  );
  t.equal(answered, undefined, 'the scrape waits for the read while the clock stands');
  await clock.advance(1999);
  t.equal(clock.pending(), idle + 1, '1 ms before its bound, its timer still waits');
  t.equal(answered, undefined, 'and the scrape with it');
  await clock.advance(1);
  const late = await pending;
  t.equal(late.status, 200, '/metrics answers once its 2 s are up');
  t.equal(gauge(late.text), 0, "with the gauge's last value");
  t.match(late.text, /opco_proxy_http_requests_total/, 'and every other metric');

  // Scrapes meanwhile share the hung read (none piles another on the store) and answer at their
  // bound; once the read has hung for 60 s (STORE_GAUGE.MAX_EVERY_MS), the next scrape sends another.
  t.equal(state.held, 1, 'one hung read so far');
  const both = Promise.all([scrape(), scrape()]);
  await eventually(() => clock.pending() >= idle + 2, 'both scrapes waiting on their bound');
  await clock.advance(2000);
  const [a, b] = await both;
  t.same([a.status, b.status], [200, 200], 'both scrapes answer');
  t.equal(state.held, 1, 'sharing the one hung read');
  await clock.advance(STORE_GAUGE.MAX_EVERY_MS - 4000);
  const next = scrape();
  await eventually(() => state.held === 2, 'a new read sent once the hung one is 60 s old');
  await clock.advance(2000);
  t.equal((await next).status, 200);
});
