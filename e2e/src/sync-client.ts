/** Client-side helpers for sync tests. */
import { setTimeout as sleep } from 'node:timers/promises';
import { KEY_A, type Reply } from './harness.js';

type Requester = {
  request(method: string, path: string, options?: { key?: string | null; body?: unknown }): Promise<Reply>;
};

/** Polls GET /sync/{id}, recording every state seen, until `until` holds. */
export async function watchSync(
  service: Requester,
  syncId: string,
  options: { key?: string; timeoutMs?: number; until?: (sync: any) => boolean } = {},
) {
  const until = options.until ?? ((sync) => ['completed', 'failed', 'cancelled'].includes(sync.status));
  const seen: any[] = [];
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    const reply = await service.request('GET', `/sync/${syncId}`, { key: options.key ?? KEY_A });
    if (reply.status !== 200) throw new Error(reply.text);
    seen.push(reply.body);
    if (until(reply.body)) return { sync: reply.body, seen };
    await sleep(20);
  }
  throw new Error(`sync ${syncId} did not get there: ${JSON.stringify(seen.at(-1))}`);
}
