// The load generator: wrk when installed (C, cheap on its core), else autocannon from npm, run
// in this process (which pinSelf() put on the load core). Both report requests per second and
// latency percentiles over a closed loop of `connections` keep-alive connections.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { LOAD_CPU, PINNED } from './processes.mjs';

export const GENERATOR = spawnSync('wrk', ['--version']).error ? 'autocannon' : 'wrk';

/**
 * `{rps, p50Ms, p99Ms, requests, errors}`; errors counts socket errors, timeouts and answers
 * that are not 2xx, which make a benchmark exit non-zero (a timing never does).
 */
export function load({ url, connections = 50, durationS, headers = {} }) {
  return GENERATOR === 'wrk' ? wrk(url, connections, durationS, headers) : cannon(url, connections, durationS, headers);
}

async function wrk(url, connections, durationS, headers) {
  const args = ['-t1', `-c${connections}`, `-d${durationS}s`, '--latency', '--timeout', '10s'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  const [cmd, argv] = PINNED ? ['taskset', ['-c', LOAD_CPU, 'wrk', ...args]] : ['wrk', args];
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  child.stderr.on('data', (c) => {
    out += c;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`wrk exited ${code}:\n${out}`);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socket ? socket.slice(1).reduce((s, n) => s + Number(n), 0) : 0);
  return { rps, requests, errors, p50Ms: wrkLatency(out, '50%'), p99Ms: wrkLatency(out, '99%') };
}

function wrkLatency(out, percentile) {
  const match = new RegExp(`^\\s*${percentile}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(out);
  if (!match) return NaN;
  const scale = { us: 0.001, ms: 1, s: 1000 }[match[2]];
  return Number(match[1]) * scale;
}

async function cannon(url, connections, durationS, headers) {
  const result = await autocannon({ url, connections, duration: durationS, headers });
  return {
    rps: result.requests.total / durationS,
    requests: result.requests.total,
    errors: result.errors + result.timeouts + result.non2xx,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

/**
 * Latency at a fixed offered rate (open loop: requests leave on a schedule, whether the previous
 * ones came back or not), over `connections` keep-alive connections, timed in this process to the
 * microsecond: below saturation this is what the measured hop adds to each call, not queueing.
 */
export async function latencyAtRate({ url, connections = 50, rate, durationS, headers = {} }) {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections });
  const samples = [];
  let errors = 0;
  const total = Math.round(rate * durationS);
  const started = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(
      (async () => {
        const sent = performance.now();
        try {
          const answer = await pool.request({ method: 'GET', path: target.pathname + target.search, headers });
          await answer.body.dump();
          if (answer.statusCode >= 300) errors += 1;
          else samples.push(performance.now() - sent);
        } catch {
          errors += 1;
        }
      })(),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(samples.length * q))] ?? NaN;
  return { rps: samples.length / elapsed, p50Ms: at(0.5), p99Ms: at(0.99), errors };
}
