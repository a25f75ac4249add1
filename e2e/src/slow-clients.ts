/**
 * Slow clients (issue 38, point 6), as attack tools play them: sockets that send their headers a
 * byte at a time and never finish them (slowloris), and sockets that send whole headers, then
 * their body a byte at a time (slow POST). Each socket keeps its writing side open whatever the
 * service answers (`allowHalfOpen`) and goes on trickling, so it is closed only when the service
 * closes it. Sockets are spread over loopback addresses (Linux routes 127/8 to loopback) so that
 * the per-address connection cap lets them all in.
 */
import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface SlowSocket {
  from: string;
  /** When the socket connected, when the service ended the connection (its FIN or a reset), and when the socket was closed whole (ms of performance.now()). */
  openedAt?: number;
  endedAt?: number;
  closedAt?: number;
  /** The status line of what the service answered, if anything. */
  answer?: string;
  error?: string;
}

export interface SlowSockets {
  sockets: SlowSocket[];
  /** Resolves once every socket is closed, or after `withinMs`. */
  closed(withinMs: number): Promise<void>;
  /** How long each socket stayed open (ms; Infinity while open), sorted. */
  lifetimes(): number[];
  /** How many sockets got each status line (`HTTP/1.1 408 Request Timeout`: 12). */
  answers(): Record<string, number>;
  destroy(): void;
}

export interface SlowOptions {
  count: number;
  /** Local addresses the sockets are spread over, round-robin. */
  from: string[];
  /** One byte per this many ms (default 1000). */
  intervalMs?: number;
  /** For bodies: the headers each socket sends whole first. */
  headers?: (index: number) => string;
  /** The sockets are opened evenly over this long, as attack tools ramp up (default 0: at once). */
  rampMs?: number;
}

const HEADER_TRICKLE = 'X-Slow: ' + 'a'.repeat(4096);

/** Headers that never end, one byte per interval after the request line. */
export function slowHeaders(url: string, options: SlowOptions): SlowSockets {
  return trickle(url, options, () => 'GET /health HTTP/1.1\r\nHost: opco-proxy\r\n', HEADER_TRICKLE);
}

/** Whole headers announcing a body of 100 kB, then the body one byte per interval. */
export function slowBodies(url: string, options: SlowOptions & { headers: (index: number) => string }): SlowSockets {
  return trickle(url, options, options.headers, ' '.repeat(100_000));
}

function trickle(url: string, options: SlowOptions, start: (index: number) => string, bytes: string): SlowSockets {
  const { hostname, port } = new URL(url);
  const sockets: SlowSocket[] = [];
  const live: Socket[] = [];
  const ramp: NodeJS.Timeout[] = [];
  for (let index = 0; index < options.count; index++) {
    const from = options.from[index % options.from.length];
    const record: SlowSocket = { from };
    sockets.push(record);
    const socket = new Socket({ allowHalfOpen: true });
    live.push(socket);
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const open = () =>
      socket.connect({ host: hostname, port: Number(port), localAddress: from }, () => {
        record.openedAt = performance.now();
        socket.write(start(index));
        timer = setInterval(() => {
          if (socket.writable && !socket.destroyed) socket.write(bytes[sent++ % bytes.length]);
        }, options.intervalMs ?? 1000);
      });
    const delay = options.rampMs ? (options.rampMs * index) / options.count : 0;
    if (delay > 0) ramp.push(setTimeout(open, delay));
    else open();
    socket.on('data', (chunk: Buffer) => {
      record.answer ??= chunk.toString('latin1').split('\r\n')[0];
    });
    // A hostile client ignores the end of the answer: its side stays open until the service
    // closes the connection (or resets it: the error is what it sees then).
    socket.on('end', () => {
      record.endedAt ??= performance.now();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      record.error = err.code ?? err.message;
    });
    socket.on('close', () => {
      record.closedAt = performance.now();
      record.endedAt ??= record.closedAt;
      clearInterval(timer);
    });
  }
  const lifetimes = () =>
    sockets
      .map((s) => (s.openedAt === undefined ? Infinity : (s.closedAt ?? Infinity) - s.openedAt))
      .sort((a, b) => a - b);
  return {
    sockets,
    lifetimes,
    async closed(withinMs) {
      const deadline = performance.now() + withinMs;
      while (performance.now() < deadline && sockets.some((s) => s.closedAt === undefined))
        await new Promise((resolve) => setTimeout(resolve, 100));
    },
    answers() {
      const counts: Record<string, number> = {};
      for (const { answer, error } of sockets) {
        const key = answer ?? (error ? `no answer (${error})` : 'no answer');
        counts[key] = (counts[key] ?? 0) + 1;
      }
      return counts;
    },
    destroy() {
      for (const timer of ramp) clearTimeout(timer);
      for (const socket of live) socket.destroy();
    },
  };
}

/**
 * GET /health every `everyMs` while running, each on a new connection (as a balancer's health
 * check does, so accepting is measured too); each probe's time to answer (ms), and failures.
 */
export function probeHealthNewConnections(
  url: string,
  everyMs = 100,
): { stop(): Promise<{ times: number[]; at: number[]; failures: string[] }> } {
  const times: number[] = [];
  const at: number[] = [];
  const failures: string[] = [];
  const pending = new Set<Promise<void>>();
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const request = get(`${url}/health`, { agent: false, timeout: 5000 }, (reply) => {
        reply.resume();
        reply.on('end', () => {
          if (reply.statusCode !== 200) failures.push(`status ${reply.statusCode}`);
          times.push(performance.now() - started);
          at.push(started);
          resolve();
        });
      });
      request.on('timeout', () => request.destroy(new Error('no answer within 5 s')));
      request.on('error', (err) => {
        failures.push(err.message);
        resolve();
      });
    });
  const timer = setInterval(() => {
    const probe = once().finally(() => pending.delete(probe));
    pending.add(probe);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return { times, at, failures };
    },
  };
}

export interface HealthProbes {
  /** Each probe's time to answer (ms), and when it was sent (ms since the prober started). */
  times: number[];
  at: number[];
  failures: string[];
}

/**
 * probeHealthNewConnections in a process of its own, so that what the attacking sockets cost the
 * test's own event loop is not counted against the service. `ready` resolves once it probes: a
 * process takes a while to start on a loaded machine.
 */
export function probeHealthApart(url: string, everyMs = 100): { ready: Promise<void>; stop(): Promise<HealthProbes> } {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), url, String(everyMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  let started: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes(READY)) started();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    ready,
    async stop() {
      child.stdin.end();
      await exited;
      return JSON.parse(out.slice(out.indexOf(READY) + READY.length)) as HealthProbes;
    },
  };
}

const READY = 'probing\n';

// `node slow-clients.js URL EVERY_MS`: probes until its stdin ends, then prints what it saw.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const probe = probeHealthNewConnections(process.argv[2], Number(process.argv[3]));
  process.stdout.write(READY);
  process.stdin.resume();
  process.stdin.once('end', () => {
    void probe
      .stop()
      .then(({ times, at, failures }) =>
        process.stdout.write(JSON.stringify({ times, at: at.map((ms) => ms - started), failures })),
      );
  });
}
