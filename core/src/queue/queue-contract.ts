/**
 * The one contract every Queue implementation passes (DESIGN "Ports"). A backend's test file
 * calls `queueContract(t, makeQueue, {cleanup})`; each subtest opens its own queue object, works
 * in queues with a random suffix (parallel runs share a broker), closes it, then hands every queue
 * name it used to `cleanup` so the backend can delete what it created.
 *
 * Timing is asserted loosely (a delayed message not before 80 % of its delay, and within the
 * delay + 3 s) so that a loaded CI machine does not make it flaky.
 *
 * Shipped in src, not test, so that backend packages can import it
 * (`@opco-proxy/core/queue-contract`); `tap` is only a type import here.
 */
import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { Queue, ReceivedMessage } from '../ports/queue.js';

export interface QueueContractOptions {
  /** Called after the queue object is closed, once per queue name a subtest used. */
  cleanup?: (queueName: string) => Promise<void>;
  /**
   * The priorities a backend keeps apart when it has fewer than ten levels (RabbitMQ's replicated
   * queues: 1, 5, 10); a priority between two waits with the later level. Default: all ten.
   */
  priorityLevels?: readonly number[];
}

interface Item {
  id: string;
}

/** A message as the test saw it, with when it arrived. */
interface Arrival extends ReceivedMessage<Item> {
  at: number;
}

type Body = (t: Test, queue: Queue, name: (label: string) => string) => Promise<void>;

const LATE_MARGIN_MS = 3000;

export function queueContract(t: Test, makeQueue: () => Promise<Queue>, options: QueueContractOptions = {}): void {
  const run = (title: string, body: Body): void => {
    void t.test(title, async (t) => {
      const queue = await makeQueue();
      const names: string[] = [];
      t.teardown(async () => {
        await queue.close();
        for (const name of names) await options.cleanup?.(name);
      });
      const name = (label: string): string => {
        const made = `contract.${label}.${randomBytes(5).toString('hex')}`;
        names.push(made);
        return made;
      };
      await body(t, queue, name);
    });
  };

  run('ping resolves and kind names the backend', async (t, queue) => {
    await queue.ping();
    t.type(queue.kind, 'string');
    t.ok(queue.kind.length > 0);
  });

  run('a published message reaches a consumer as a copy, with its priority', async (t, queue, name) => {
    const q = name('roundtrip');
    const body = { id: 'a', nested: { n: 1, list: [1, 'two', null] }, flag: true };
    await queue.publish(q, body);
    body.nested.n = 2; // after publish: must not reach the consumer
    const got: Arrival[] = [];
    await queue.consume<Item>(q, collectInto(got));
    await waitFor(() => got.length === 1, 5000, 'the message arrives');
    t.strictSame(got[0].body, { id: 'a', nested: { n: 1, list: [1, 'two', null] }, flag: true });
    t.equal(got[0].priority, 5, 'priority defaults to 5');
    t.equal(got[0].redelivered, false);
    await queue.publish(q, { id: 'b' }, { priority: 1 });
    await waitFor(() => got.length === 2, 5000, 'a message published while consuming arrives');
    t.equal(got[1].priority, 1);
  });

  run('lower priority numbers come first, first in first out within a priority', async (t, queue, name) => {
    const q = name('priority');
    const published: [string, number][] = [
      ['a', 10],
      ['b', 1],
      ['c', 5],
      ['d', 1],
      ['e', 10],
      ['f', 5],
      ['g', 1],
      ['h', 7],
      ['i', 5],
    ];
    for (const [id, priority] of published) await queue.publish(q, { id }, { priority });
    const got: Arrival[] = [];
    await queue.consume<Item>(q, collectInto(got), { prefetch: 1 });
    await waitFor(() => got.length === published.length, 5000, 'every message arrives');
    // Ten levels: b d g c f i h a e. Fewer: by level, first in first out within one (sort is stable).
    const level = (priority: number) => options.priorityLevels?.find((l) => l >= priority) ?? priority;
    const expected = [...published].sort((x, y) => level(x[1]) - level(y[1]));
    t.strictSame(
      got.map((m) => m.body.id),
      expected.map(([id]) => id),
    );
    t.strictSame(
      got.map((m) => m.priority),
      expected.map(([, priority]) => priority),
      'each keeps its priority',
    );
  });

  run('a delayed message is not delivered before its delay, and keeps its priority', async (t, queue, name) => {
    const q = name('delay');
    const delayMs = 800;
    const got: Arrival[] = [];
    await queue.consume<Item>(q, collectInto(got));
    const sent = Date.now();
    await queue.publish(q, { id: 'late' }, { delayMs, priority: 1 });
    await queue.publish(q, { id: 'now' }, { priority: 10 });
    await waitFor(() => got.length === 2, delayMs + LATE_MARGIN_MS, 'both arrive');
    t.strictSame(
      got.map((m) => m.body.id),
      ['now', 'late'],
      'the undelayed one first',
    );
    const waited = got[1].at - sent;
    t.ok(waited >= delayMs * 0.8, `not before the delay (${waited} ms for ${delayMs} ms)`);
    t.equal(got[1].priority, 1);
    t.equal(got[1].redelivered, false);
  });

  run('a consumer never holds more messages than its prefetch', async (t, queue, name) => {
    const q = name('prefetch');
    for (let i = 0; i < 8; i++) await queue.publish(q, { id: `m${i}` });
    let inFlight = 0;
    let most = 0;
    let done = 0;
    await queue.consume<Item>(
      q,
      async () => {
        most = Math.max(most, ++inFlight);
        await sleep(100);
        inFlight--;
        done++;
      },
      { prefetch: 2 },
    );
    await waitFor(() => done === 8, 10_000, 'every message is handled');
    t.equal(most, 2, 'two at a time, never more');
  });

  run('a rejected message comes back later with redelivered=true, and is not lost', async (t, queue, name) => {
    const q = name('reject');
    const redeliveryDelayMs = 500;
    const got: Arrival[] = [];
    let refused = 0;
    await queue.consume<Item>(
      q,
      async (message) => {
        got.push({ ...message, at: Date.now() });
        if (message.body.id === 'flaky' && refused++ === 0) throw new Error('upstream answered 503');
      },
      { redeliveryDelayMs },
    );
    await queue.publish(q, { id: 'flaky' }, { priority: 1 });
    await waitFor(() => got.length === 1, 5000, 'the first delivery');
    await queue.publish(q, { id: 'other' });
    await waitFor(() => got.length === 3, redeliveryDelayMs + LATE_MARGIN_MS, 'the other one and the redelivery');
    t.strictSame(
      got.map((m) => [m.body.id, m.redelivered]),
      [
        ['flaky', false],
        ['other', false],
        ['flaky', true],
      ],
    );
    const back = got[2];
    t.ok(back.at - got[0].at >= redeliveryDelayMs * 0.8, `after the redelivery delay (${back.at - got[0].at} ms)`);
    t.equal(back.priority, 1, 'with its priority');
    await sleep(redeliveryDelayMs * 2);
    t.equal(got.length, 3, 'acknowledged once handled: not delivered again');
  });

  run('a handler that throws synchronously counts as a rejection', async (t, queue, name) => {
    const q = name('throws');
    const got: boolean[] = [];
    await queue.consume<Item>(
      q,
      (message: ReceivedMessage<Item>) => {
        got.push(message.redelivered);
        if (!message.redelivered) throw new Error('boom');
        return Promise.resolve();
      },
      { redeliveryDelayMs: 50 },
    );
    await queue.publish(q, { id: 'x' });
    await waitFor(() => got.length === 2, LATE_MARGIN_MS, 'redelivered');
    t.strictSame(got, [false, true]);
  });

  run('consumers of one queue share the work, each message to exactly one', async (t, queue, name) => {
    const q = name('shared');
    const count = 20;
    for (let i = 0; i < count; i++) await queue.publish(q, { id: `m${i}` });
    const byConsumer: string[][] = [[], []];
    for (const seen of byConsumer) {
      await queue.consume<Item>(
        q,
        async (message) => {
          seen.push(message.body.id);
          await sleep(20);
        },
        { prefetch: 1 },
      );
    }
    await waitFor(() => byConsumer[0].length + byConsumer[1].length >= count, 10_000, 'every message is handled');
    await sleep(300);
    const all = [...byConsumer[0], ...byConsumer[1]];
    t.equal(all.length, count, 'no duplicates');
    t.equal(new Set(all).size, count, 'every message once');
    t.ok(
      byConsumer[0].length > 0 && byConsumer[1].length > 0,
      `both took a share (${byConsumer[0].length}/${byConsumer[1].length})`,
    );
  });

  run('cancel waits for handlers in flight and takes no more messages', async (t, queue, name) => {
    const q = name('cancel');
    let finished = false;
    let started = 0;
    const consumer = await queue.consume<Item>(q, async () => {
      started++;
      await sleep(300);
      finished = true;
    });
    await queue.publish(q, { id: 'slow' });
    await waitFor(() => started === 1, 5000, 'the handler starts');
    await consumer.cancel();
    t.ok(finished, 'cancel resolved after the handler finished');
    await consumer.cancel(); // twice is harmless
    await queue.publish(q, { id: 'after' });
    await sleep(300);
    t.equal(started, 1, 'a cancelled consumer gets nothing more');
    const got: Arrival[] = [];
    await queue.consume<Item>(q, collectInto(got));
    await waitFor(() => got.length === 1, 5000, 'the next consumer gets it');
    t.equal(got[0].body.id, 'after');
  });

  run('depth counts ready and delayed messages, and the consumers', async (t, queue, name) => {
    const q = name('depth');
    t.match(await queue.depth(q), { queue: q, ready: 0 }, 'a queue never used is empty');
    await queue.publish(q, { id: 'a' });
    await queue.publish(q, { id: 'b' }, { priority: 1 });
    await queue.publish(q, { id: 'later' }, { delayMs: 60_000 });
    const waiting = await queue.depth(q);
    t.equal(waiting.ready, 2, 'two ready');
    t.ok(waiting.delayed === null || waiting.delayed === 1, `one delayed, or unknown (${waiting.delayed})`);
    t.ok(waiting.consumers === null || waiting.consumers === 0, 'no consumer yet');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const got: string[] = [];
    await queue.consume<Item>(
      q,
      async (message) => {
        got.push(message.body.id);
        await held;
      },
      { prefetch: 4 },
    );
    await waitFor(() => got.length === 2, 5000, 'both ready messages are handed over');
    const handed = await queue.depth(q);
    t.equal(handed.ready, 0, 'none ready once handed to the consumer');
    t.ok(
      handed.unacknowledged === null || handed.unacknowledged === 2,
      `two unacknowledged, or unknown (${handed.unacknowledged})`,
    );
    t.ok(handed.consumers === null || handed.consumers === 1, `one consumer, or unknown (${handed.consumers})`);
    release();
  });

  run('invalid publish and consume options are refused', async (t, queue, name) => {
    const q = name('invalid');
    for (const priority of [0, 11, 2.5, Number.NaN])
      await t.rejects(queue.publish(q, { id: 'x' }, { priority }), TypeError, `priority ${priority}`);
    await t.rejects(queue.publish(q, { id: 'x' }, { delayMs: -1 }), TypeError, 'a negative delay');
    await t.rejects(queue.publish(q, undefined), TypeError, 'a body that is not JSON');
    await t.rejects(queue.publish('', { id: 'x' }), TypeError, 'an empty queue name');
    await t.rejects(
      queue.consume(q, async () => undefined, { prefetch: 0 }),
      TypeError,
      'prefetch 0',
    );
  });

  run('after close, publish, consume and ping reject', async (t, queue, name) => {
    const q = name('closed');
    await queue.publish(q, { id: 'x' });
    await queue.close();
    await t.rejects(queue.publish(q, { id: 'y' }), 'publish');
    await t.rejects(
      queue.consume(q, async () => undefined),
      'consume',
    );
    await t.rejects(queue.ping(), 'ping');
    await t.rejects(queue.depth(q), 'depth');
    await queue.close(); // twice is harmless
  });
}

function collectInto(got: Arrival[]): (message: ReceivedMessage<Item>) => Promise<void> {
  return async (message) => {
    got.push({ ...message, at: Date.now() });
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `condition` holds; fails with `what` past `timeoutMs`. */
async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(10);
  }
}
