/**
 * Waiting in tests for what happens in another process or on a server (a message consumed, a
 * record written, a webhook received): polling for it instead of betting on a fixed sleep.
 * Shipped in src, like the TCP relay, so every package's tests use this one
 * (`@opco-proxy/core/eventually`).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** The first truthy value `probe` gives; fails naming `what` past `timeoutMs`. */
export async function eventually<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what: string | (() => string),
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`still waiting after ${timeoutMs} ms for ${typeof what === 'string' ? what : what()}`);
    await sleep(20);
  }
}
