// One load run against one process: the load generator's figures plus the process's own CPU
// time per request and its RSS at the end of the run.
import { load } from './load.mjs';

export async function measure(proc, { path, headers = {}, connections, durationS }) {
  const cpuBefore = proc.cpuSeconds();
  const result = await load({ url: proc.url + path, connections, durationS, headers });
  const cpuUs = ((proc.cpuSeconds() - cpuBefore) * 1e6) / Math.max(1, result.requests);
  return { ...result, cpuUsPerRequest: cpuUs, rssBytes: proc.rssBytes() };
}

export function describe(name, m) {
  return `${name.padEnd(14)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ${m.cpuUsPerRequest.toFixed(0)} µs CPU/req  RSS ${(m.rssBytes / 1048576).toFixed(0)} MiB${m.errors ? `  ERRORS ${m.errors}` : ''}`;
}
