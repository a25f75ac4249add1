/**
 * Waiting for what the service does after the state a test polled for: a job or a sync is
 * stored as ended before its domain event is emitted, so a test that saw the end must wait
 * for the event rather than expect it already there.
 */
import type { DomainEvent } from '@opco-proxy/core';
import { eventually } from '@opco-proxy/core/eventually';

export { eventually };

/** The first event of `type` whose data matches `data` (shallowly), once it has been emitted. */
export function emitted(events: DomainEvent[], type: string, data: Record<string, unknown>): Promise<DomainEvent> {
  const matches = (event: DomainEvent) =>
    event.type === type && Object.entries(data).every(([key, value]) => event.data[key] === value);
  return eventually(() => events.find(matches), `${type} ${JSON.stringify(data)}`);
}

type LogReader = { get(path: string, options?: { key?: string | null }): Promise<{ status: number; body: any }> };

/**
 * A webhook's delivery logs once `until` holds: the receiver sees a request before the service
 * has recorded its answer, so a test that saw the request must wait for the record.
 */
export function deliveryLogs(
  service: LogReader,
  webhookId: string,
  until: (logs: any[]) => boolean,
  key?: string,
): Promise<any[]> {
  let last: any[] = [];
  const probe = async () => {
    const reply = await service.get(`/webhooks/${webhookId}/logs`, key === undefined ? {} : { key });
    last = reply.status === 200 ? reply.body : [];
    return until(last) && last;
  };
  return eventually(probe, () => `logs of webhook ${webhookId} to match; last: ${JSON.stringify(last)}`, 10_000);
}
