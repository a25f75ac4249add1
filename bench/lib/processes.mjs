// Processes side by side for the benchmarks: free ports, `taskset` pinning (service and
// baselines on one core, load generator and upstream on the other), readiness by polling, and
// the CPU time and RSS of a process tree read from /proc.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pinning needs taskset and two cores; without it every process shares whatever cores there are. */
export const PINNED = availableParallelism() >= 2 && spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
export const SERVICE_CPU = '0';
export const LOAD_CPU = '1';
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** Moves this process (the orchestrator, which may generate load itself) onto the load core. */
export function pinSelf(cpu = LOAD_CPU) {
  if (PINNED) spawnSync('taskset', ['-a', '-p', '-c', cpu, String(process.pid)]);
}

export function pinning() {
  return PINNED
    ? `pinned with taskset: service and baselines on CPU ${SERVICE_CPU}, load generator and upstream on CPU ${LOAD_CPU}`
    : 'not pinned (no taskset or a single core)';
}

export async function freePort() {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts `command args` (pinned to `cpu` when possible). Output goes to /dev/null unless `capture`,
 * so a chatty process does not cost the orchestrator's core. Stopped by its own pid.
 */
export function startProcess({ name, command, args = [], env = {}, cpu, capture = false }) {
  const [cmd, argv] = PINNED && cpu !== undefined ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
  const child = spawn(cmd, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', capture ? 'pipe' : 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk) => {
    output = (output + chunk).slice(-4000);
  });
  child.stdout?.on('data', (chunk) => {
    output = (output + chunk).slice(-4000);
  });
  const exited = once(child, 'exit');
  return {
    name,
    child,
    pid: child.pid,
    output: () => output,
    /** User + system CPU seconds of the process and its descendants (nginx's workers). */
    cpuSeconds: () => cpuSecondsOf(child.pid),
    rssBytes: () => treePids(child.pid).reduce((sum, pid) => sum + rss(pid), 0),
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `url` answers (any status); throws with the process's output when it died first. */
export async function waitForHttp(url, proc, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc && !proc.alive()) throw new Error(`${proc.name} exited before answering ${url}:\n${proc.output()}`);
    try {
      await (await fetch(url)).arrayBuffer();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms${proc ? `:\n${proc.output()}` : ''}`);
}

/** User + system CPU time of a process and its children, in seconds, from /proc. */
export function cpuSecondsOf(pid) {
  return treePids(pid).reduce((sum, p) => sum + cpuTicks(p), 0) / TICKS_PER_S;
}

function treePids(pid) {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    const file = `/proc/${pids[i]}/task/${pids[i]}/children`;
    if (!existsSync(file)) continue;
    const children = readFileSync(file, 'utf8').trim();
    if (children) pids.push(...children.split(/\s+/).map(Number));
  }
  return pids;
}

function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
  } catch {
    return 0;
  }
}

function rss(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
