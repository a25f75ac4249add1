import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createQueue } from '../src/index.js';
import { brokerUrl } from './fixtures/broker-under-test.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@opco-proxy/core/eventually';
import { ScratchQueues } from './fixtures/scratch-queues.js';

/**
 * A worker process dies (SIGKILL: no cleanup, no nack) while it holds an unacknowledged message:
 * the broker must give that message to another consumer, marked redelivered.
 */
const url = brokerUrl(t, 'a killed RabbitMQ consumer');
const fixture = fileURLToPath(new URL('./fixtures/consumer-process.js', import.meta.url));

if (url) {
  t.test('the message a killed consumer held comes to another one with redelivered=true', async (t) => {
    const scratch = new ScratchQueues(url);
    const queue = scratch.track(await createQueue({ url }));
    t.teardown(async () => {
      await queue.close();
      await scratch.deleteAll();
    });
    const name = scratch.name('killed');
    await queue.publish(name, { id: 'held' }, { priority: 1 });

    const child = spawn(process.execPath, [fixture, name], {
      env: { ...process.env, RABBITMQ_URL: url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    t.teardown(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const events: { event: string; message?: { body: unknown; redelivered: boolean } }[] = [];
    createInterface({ input: child.stdout }).on('line', (line) =>
      events.push(JSON.parse(line) as (typeof events)[number]),
    );
    await eventually(() => events.some((e) => e.event === 'holding'), 'the child takes the message', 10_000);
    const holding = events.find((e) => e.event === 'holding');
    t.strictSame(
      holding?.message,
      { body: { id: 'held' }, priority: 1, redelivered: false },
      'first delivery, not redelivered',
    );

    const seen: { body: unknown; redelivered: boolean; priority: number }[] = [];
    await queue.consume(
      name,
      async (message) => {
        seen.push(message);
      },
      { prefetch: 1 },
    );
    await sleep(300);
    t.equal(seen.length, 0, 'nothing for us while the child holds it');

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    await eventually(() => seen.length === 1, 'the message comes to us', 10_000);
    t.strictSame(seen[0], { body: { id: 'held' }, priority: 1, redelivered: true });
  });
}
