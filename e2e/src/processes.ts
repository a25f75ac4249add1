/** Runs the real CLI as child processes (serve, api, worker) for process-level tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../../server/dist/src/cli.js', import.meta.url));
/** Where operators' scripts of earlier versions start it: core's forwarding file. */
export const LEGACY_CLI = fileURLToPath(new URL('../../../core/dist/src/cli.js', import.meta.url));

export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the URL once an HTTP role is listening. */
  url: Promise<string>;
  /** Resolves when a line matching `pattern` was printed. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<void>;
}

/** `cwd`: the working directory of the process (an operator's directory), default the test's. */
export function runCli(args: string[], env: Record<string, string> = {}, cli = CLI, cwd?: string): CliProcess {
  return watchProcess(
    spawn(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Collects what a child process prints and tells when a line appears (its URL once it listens). */
export function watchProcess(child: ChildProcess): CliProcess {
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const printed = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(text)) return;
        listeners.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; output:\n${text.slice(-3000)}`));
      }, timeoutMs);
      listeners.add(check);
      child.once('exit', (code) => {
        if (listeners.delete(check)) {
          clearTimeout(timer);
          reject(new Error(`exited ${code} before ${pattern}; output:\n${text.slice(-3000)}`));
        }
      });
      check();
    });
  const url = printed(/listening on http:\/\/\S+/).then(() => /listening on (http:\/\/[^\s"]+)/.exec(text)![1]);
  url.catch(() => {});
  return { child, output: () => text, url, printed };
}

export async function stopCli(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill(signal);
  const [code] = await once(child, 'close');
  return code as number | null;
}

export function writeConfig(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'opco-config-')), 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** A port free now on 127.0.0.1, for a process that cannot be told to listen on port 0. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
