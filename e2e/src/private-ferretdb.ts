/**
 * A FerretDB v1 of a test's own, on a PostgreSQL database of its own, for what needs a setting of
 * the server (its PostgreSQL pool) or may leave it unusable. The binary is the one .ci/ferretdb.sh
 * builds (FERRETDB_BIN, else its cache path); PostgreSQL is the standard PG* variables' server.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { freePort } from './processes.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { eventually } from './eventually.js';

export interface PrivateFerretDb {
  /** `mongodb://…?directConnection=true` */
  url: string;
  /** Stops it (killed if it does not stop in 5 s: a wedged one may not) and drops its database; once. */
  close(): Promise<void>;
}

const PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: process.env.PGPORT ?? '5432',
  user: process.env.PGUSER ?? 'postgres',
};

/** Where the machine's PostgreSQL listens, `host:port` (what a relay in front of it forwards to). */
export function postgresAddress(): string {
  return `${PG.host}:${PG.port}`;
}

function binary(): string {
  return process.env.FERRETDB_BIN ?? join(homedir(), '.cache/opco-proxy/ferretdb-v1.24.2');
}

/** Why a private FerretDB cannot be started here, or false. */
export function privateFerretDbSkip(): string | false {
  if (!existsSync(binary()))
    return `no FerretDB binary at ${binary()} (.ci/ferretdb.sh builds it; or set FERRETDB_BIN)`;
  try {
    execFileSync('psql', ['-XAtq', '-h', PG.host, '-p', PG.port, '-U', PG.user, '-d', 'postgres', '-c', 'select 1'], {
      stdio: 'ignore',
      timeout: 5000,
    });
    return false;
  } catch {
    return `PostgreSQL is not reachable at ${PG.host}:${PG.port} as ${PG.user}`;
  }
}

/**
 * `postgresVia`: the `host:port` FerretDB dials for PostgreSQL instead of the server itself (a
 * TCP relay in front of it, to take PostgreSQL away from a running FerretDB).
 */
export async function startPrivateFerretDb(
  label: string,
  options: { poolMaxConns: number; postgresVia?: string },
): Promise<PrivateFerretDb> {
  const database = `${label}_${process.pid}_${Date.now()}`;
  const pg = ['-h', PG.host, '-p', PG.port, '-U', PG.user];
  execFileSync('createdb', [...pg, database]);
  const port = await freePort();
  const pgUrl = `postgres://${PG.user}@${options.postgresVia ?? `${PG.host}:${PG.port}`}/${database}?pool_max_conns=${options.poolMaxConns}`;
  const child: ChildProcess = spawn(
    binary(),
    [
      '--handler=postgresql',
      `--postgresql-url=${pgUrl}`,
      `--listen-addr=127.0.0.1:${port}`,
      '--state-dir=-',
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
    { stdio: 'ignore' },
  );
  const exited = once(child, 'exit');
  // Not left behind by a test process that ends without its teardowns (tap's timeout sends SIGTERM,
  // which ends a process without its 'exit' listeners: the signal is raised again once it is killed).
  const orphaned = () => child.kill('SIGKILL');
  const terminated = () => {
    orphaned();
    process.kill(process.pid, 'SIGTERM');
  };
  process.once('exit', orphaned);
  process.once('SIGTERM', terminated);
  let dropped = false;
  const close = async () => {
    if (dropped) return;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    dropped = true;
    process.off('exit', orphaned);
    process.off('SIGTERM', terminated);
    execFileSync('dropdb', [...pg, '--if-exists', '--force', database], { stdio: 'ignore' });
  };
  const url = `mongodb://127.0.0.1:${port}/test?directConnection=true`;
  const answers = async () => {
    if (child.exitCode !== null)
      throw new Error(`FerretDB exited (${child.exitCode}) before answering on port ${port}`);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 500 });
    try {
      return await client
        .db('admin')
        .command({ ping: 1 })
        .then(
          () => true,
          () => false,
        );
    } finally {
      await client.close();
    }
  };
  try {
    await eventually(answers, `FerretDB to answer on port ${port}`, 15_000);
  } catch (err) {
    await close();
    throw err;
  }
  return { url, close };
}
