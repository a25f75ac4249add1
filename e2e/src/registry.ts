/**
 * A real npm registry for the packaging journeys (issue 30): Verdaccio, started on 127.0.0.1 with
 * its storage in a temporary directory. The project's scopes (@opco-proxy, and @acme for the
 * integrator's adapter) live only there; every other package is proxied from the registry npm is
 * configured with. npm commands run with a user config of their own pointing at it alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { freePort } from './processes.js';

/** Verdaccio 6 and Lerna 10 need Node 22 or later; the service itself runs on 20.19+. */
export const REGISTRY_NODE_MAJOR = 22;

export interface Registry {
  url: string;
  /** The environment every npm command of a journey runs with (no npm_* variable of the caller). */
  env: NodeJS.ProcessEnv;
  /** Verdaccio's process group, stopped with `stopGroup`. */
  process: ChildProcess;
}

export interface Step {
  code: number | null;
  out: string;
  seconds: number;
}

/**
 * Starts a command in a process group of its own: `npx x` is npm, a shell and x, and a signal to
 * npm alone leaves x running (and holding the pipes).
 */
export function spawnGroup(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): ChildProcess {
  return spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Stops a group started by `spawnGroup`: SIGTERM to all of it, SIGKILL after 10 s. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // the group has ended
    }
  };
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  // The command's own children (npx's) may outlive it.
  signal('SIGKILL');
}

/** Runs a command to its end (killed after `timeoutMs`): exit code, output and wall time. */
export async function runStep(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Step> {
  const started = performance.now();
  const child = spawnGroup(command, args, options);
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const timer = setTimeout(() => void stopGroup(child), options.timeoutMs ?? 600_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, out, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

/**
 * The caller's environment without npm's own variables (npm test sets dozens), so only our user
 * config counts, nor tap's (a tap run inside this test would report to it as its child).
 */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|TAP)/i.test(key)));
}

function verdaccioConfig(uplink: string): string {
  const local = { access: '$all', publish: '$authenticated' };
  return JSON.stringify(
    {
      storage: './storage',
      auth: { htpasswd: { file: './htpasswd', max_users: 10 } },
      uplinks: {
        upstream: { url: uplink, maxage: '30m', timeout: '60s', agent_options: { keepAlive: true, maxSockets: 32 } },
      },
      packages: { '@opco-proxy/*': local, '@acme/*': local, '**': { access: '$all', proxy: 'upstream' } },
      web: { enable: false },
      log: { type: 'stdout', format: 'json', level: 'warn' },
      max_body_size: '100mb',
    },
    null,
    2,
  );
}

/**
 * Starts Verdaccio with `node` (22+) in `dir`, on a free port, and signs a user in: the returned
 * environment's npm publishes with that user's token and installs from Verdaccio alone.
 * `uplink`: where other packages come from (the registry npm here is configured with).
 */
export async function startRegistry(dir: string, node: string, uplink: string): Promise<Registry> {
  const bin = join(dirname(createRequire(import.meta.url).resolve('verdaccio/package.json')), 'bin', 'verdaccio');
  // Verdaccio's config is YAML, of which JSON is a subset.
  writeFileSync(join(dir, 'verdaccio.yaml'), verdaccioConfig(uplink));
  const port = await freePort();
  const child = spawnGroup(node, [bin, '--config', join(dir, 'verdaccio.yaml'), '--listen', `127.0.0.1:${port}`], {
    cwd: dir,
    env: cleanEnv(),
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  try {
    const url = await listeningUrl(child, () => log);
    const token = await signUp(url);
    const host = url.replace(/^http:/, '');
    writeFileSync(
      join(dir, 'npmrc'),
      `registry=${url}\n${host}:_authToken=${token}\nupdate-notifier=false\nfund=false\naudit=false\n`,
    );
    const env = { ...cleanEnv(), npm_config_userconfig: join(dir, 'npmrc'), npm_config_registry: url };
    return { url, env, process: child };
  } catch (err) {
    // The caller never gets the process to stop: a Verdaccio left running would keep the test's
    // process alive until its timeout (seen in CI: 25 minutes).
    await stopGroup(child);
    throw err;
  }
}

/** Verdaccio prints its address in its first log line, once it listens. */
async function listeningUrl(child: ChildProcess, log: () => string): Promise<string> {
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Verdaccio did not start within 60 s:\n${text}${log()}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const address = /http address - (http:\/\/127\.0\.0\.1:\d+)\//.exec(text);
      if (address) {
        clearTimeout(timer);
        resolve(`${address[1]}/`);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Verdaccio exited ${code}:\n${text}${log()}`));
    });
  });
}

/**
 * npm's login: a new user on Verdaccio's htpasswd, answered with a token. Verdaccio prints its
 * address as it starts to listen: its first connection may still be refused (seen once in CI).
 */
async function signUp(url: string): Promise<string> {
  const name = 'journeys';
  const put = () =>
    fetch(`${url}-/user/org.couchdb.user:${name}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, password: 'journeys-password-0001' }),
    });
  let answer: Response | undefined;
  for (let attempt = 1; !answer; attempt++) {
    answer = await put().catch(async (err: { cause?: { code?: string } }) => {
      if (attempt >= 50 || err.cause?.code !== 'ECONNREFUSED') throw err;
      await sleep(100);
      return undefined;
    });
  }
  const body = (await answer.json()) as { token?: string };
  if (!answer.ok || !body.token)
    throw new Error(`Verdaccio refused the user: ${answer.status} ${JSON.stringify(body)}`);
  return body.token;
}
