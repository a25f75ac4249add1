import t from 'tap';
import { createEmbeddedQueue } from '../src/queue/embedded-queue.js';
import { queueContract } from '../src/queue/queue-contract.js';

t.test('the queue contract on the embedded queue', async (t) => {
  queueContract(t, async () => createEmbeddedQueue());
});

t.test('kind is embedded', async (t) => {
  const queue = createEmbeddedQueue();
  t.teardown(() => queue.close());
  t.equal(queue.kind, 'embedded');
});
