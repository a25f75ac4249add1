/**
 * What a request costs the process that serves it, seen from outside (issue 38): a /health probe
 * on a connection of its own, and the process's own event-loop delay (prom-client's
 * monitorEventLoopDelay, reset each time /metrics is read).
 */
import { Agent, request } from 'undici';

export interface HealthProbe {
  /** Stops probing; the slowest answer and how many were made. */
  stop(): Promise<{ maxMs: number; probes: number; failures: number }>;
}

/** GET /health every `everyMs` (one at a time, on its own connection), timing each answer. */
export function probeHealthKeptAlive(url: string, everyMs = 20): HealthProbe {
  const agent = new Agent({ connections: 1, pipelining: 1 });
  let maxMs = 0;
  let probes = 0;
  let failures = 0;
  let inFlight: Promise<void> | undefined;
  const probe = async () => {
    const started = performance.now();
    try {
      const answer = await request(`${url}/health`, { dispatcher: agent, headersTimeout: 30_000, bodyTimeout: 30_000 });
      await answer.body.text();
      if (answer.statusCode !== 200) failures += 1;
    } catch {
      failures += 1;
    }
    maxMs = Math.max(maxMs, performance.now() - started);
    probes += 1;
  };
  const timer = setInterval(() => {
    inFlight ??= probe().finally(() => (inFlight = undefined));
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      await agent.close();
      return { maxMs, probes, failures };
    },
  };
}

/**
 * The longest the process's event loop was held since the last call, in ms (prom-client samples
 * it every 10 ms; a stall shows as its length). The first call only resets it.
 */
export async function eventLoopMaxMs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = /^opco_proxy_nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  if (!line) throw new Error('no opco_proxy_nodejs_eventloop_lag_max_seconds in /metrics');
  return Number(line[1]) * 1000;
}
