// opco_proxy_backend_up (metrics.ts): at each scrape the store and the queue are pinged, 1 when
// the ping answers, 0 when it fails or has not answered within 2 s; a later scrape that answers
// sets 1 again. The pings are answered by hand; time is a frozen TestClock, never slept.
import t from 'tap';
import { Registry } from 'prom-client';
import { STORE_GAUGE, TestClock, backendUpGauge } from '../src/application.js';

type Answer = 'up' | 'down' | 'hung';

function backend(kind: string) {
  const state = { answer: 'up' as Answer };
  return {
    state,
    kind,
    ping: () =>
      state.answer === 'up'
        ? Promise.resolve()
        : state.answer === 'down'
          ? Promise.reject(new Error(`${kind} down`))
          : new Promise<void>(() => {}),
  };
}

async function values(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('opco_proxy_backend_up')!.get();
  return Object.fromEntries(metric.values.map((v) => [`${v.labels.backend}/${v.labels.kind}`, v.value]));
}

t.test('up, down, hung and back up, for the store and the queue apart', async (t) => {
  const clock = new TestClock({ frozen: true });
  const registry = new Registry();
  const store = backend('mongodb');
  const queue = backend('rabbitmq');
  backendUpGauge(registry, { store, queue }, clock);
  t.same(await values(registry), { 'store/mongodb': 1, 'queue/rabbitmq': 1 }, 'both answer: 1');

  queue.state.answer = 'down';
  t.same(await values(registry), { 'store/mongodb': 1, 'queue/rabbitmq': 0 }, 'a failed ping: 0, the other stays 1');

  store.state.answer = 'hung';
  const scrape = values(registry);
  await clock.advance(STORE_GAUGE.WAIT_MS - 1);
  let done = false;
  void scrape.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.notOk(done, 'a hung ping holds the scrape until 2 s');
  await clock.advance(1);
  t.same(await scrape, { 'store/mongodb': 0, 'queue/rabbitmq': 0 }, 'no answer within 2 s: 0');

  store.state.answer = 'up';
  queue.state.answer = 'up';
  t.same(await values(registry), { 'store/mongodb': 1, 'queue/rabbitmq': 1 }, 'answering again: 1');
});
