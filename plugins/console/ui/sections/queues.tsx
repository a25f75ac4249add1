/** Depth of each work queue: what waits, what waits out a retry delay, what consumers hold. */
import type { AdminQueueList } from '@opco-proxy/schemas';
import { usePolled } from '../polled.js';
import { Problem, Table } from '../display.js';

const unknown = (value: number | null) => (value === null ? '—' : value);

export function QueuesSection({ onKeyRefused }: { onKeyRefused: (message: string) => void }) {
  const { data, error } = usePolled<AdminQueueList>('/admin/queues', onKeyRefused);
  return (
    <section aria-labelledby="queues-title">
      <h2 id="queues-title">Queues {data ? <span class="quiet">({data.kind})</span> : null}</h2>
      <Problem message={error} />
      <Table
        head={['Queue', 'Ready', 'Delayed', 'Unacknowledged', 'Consumers']}
        numbers={[1, 2, 3, 4]}
        empty="No work queue is declared."
      >
        {(data?.items ?? []).map((queue) => (
          <tr data-queue={queue.queue}>
            <th scope="row">{queue.queue}</th>
            <td class="number">{queue.ready}</td>
            <td class="number">{unknown(queue.delayed)}</td>
            <td class="number">{unknown(queue.unacknowledged)}</td>
            <td class="number">{unknown(queue.consumers)}</td>
          </tr>
        ))}
      </Table>
      <p class="quiet">— : the backend cannot tell (RabbitMQ does not report unacknowledged messages over AMQP).</p>
    </section>
  );
}
