// A FerretDB of the benchmark's own, on a throw-away PostgreSQL database (issue 11: the MongoDB
// figures run on FerretDB-on-PostgreSQL, closer to production than SQLite). Its binary is the one
// .ci/ferretdb.sh builds and caches; without it, MONGODB_URL (any MongoDB or FerretDB) is used.
// `url` given: that server is used and nothing is started.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startProcess } from './processes.mjs';

export const FERRETDB_BINARY = join(
  process.env.OPCO_PROXY_CACHE ?? join(homedir(), '.cache/opco-proxy'),
  'ferretdb-v1.24.2',
);

/** Whether a MongoDB-wire server can be had: a cached FerretDB binary or MONGODB_URL. */
export function mongoAvailable() {
  return existsSync(FERRETDB_BINARY) || Boolean(process.env.MONGODB_URL);
}

/**
 * `cpu`: where FerretDB runs when pinning (PostgreSQL itself is never pinned). The pool is 20
 * connections: above the 8 updates per process the store sends at once on FerretDB
 * (drivers/mongodb/src/update-slots.ts) for the one or two processes a bench runs.
 */
export async function startFerretDb({ url, label = 'bench', cpu } = {}) {
  if (url) return { url, stop: async () => {} };
  if (!existsSync(FERRETDB_BINARY)) {
    if (!process.env.MONGODB_URL) throw new Error('no FerretDB binary (.ci/ferretdb.sh builds it) and no MONGODB_URL');
    return { url: process.env.MONGODB_URL, stop: async () => {} };
  }
  const database = `${label}_${process.pid}`;
  execFileSync('createdb', ['-h', '127.0.0.1', '-U', 'postgres', database]);
  const port = await freePort();
  const ferret = startProcess({
    name: 'ferretdb',
    command: FERRETDB_BINARY,
    cpu,
    args: [
      '--handler=postgresql',
      `--postgresql-url=postgres://postgres@127.0.0.1:5432/${database}?pool_max_conns=20`,
      `--listen-addr=127.0.0.1:${port}`,
      '--state-dir=-',
      '--debug-addr=-',
      '--telemetry=disable',
      '--log-level=error',
    ],
  });
  // A bench that dies before its cleanup leaves no FerretDB behind (the database stays: see drop).
  process.once('exit', () => ferret.child.kill('SIGKILL'));
  const drop = () => {
    try {
      execFileSync('dropdb', ['-h', '127.0.0.1', '-U', 'postgres', '--if-exists', '--force', database], {
        stdio: 'ignore',
      });
    } catch {
      // left for the operator: named <label>_<pid>
    }
  };
  const mongoUrl = `mongodb://127.0.0.1:${port}/test?directConnection=true`;
  const { MongoClient } = await import('mongodb');
  for (let i = 0; ; i++) {
    if (!ferret.alive()) {
      drop();
      throw new Error(`FerretDB exited: ${ferret.output()}`);
    }
    if (
      await MongoClient.connect(mongoUrl, { serverSelectionTimeoutMS: 500 }).then(
        (c) => c.close().then(() => true),
        () => false,
      )
    )
      break;
    if (i > 60) {
      await ferret.stop('SIGKILL');
      drop();
      throw new Error('FerretDB did not start');
    }
    await sleep(200);
  }
  return {
    url: mongoUrl,
    pid: ferret.pid,
    stop: async () => {
      await ferret.stop();
      drop();
    },
  };
}
