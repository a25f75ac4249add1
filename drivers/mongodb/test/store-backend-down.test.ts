import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { StoreUnavailableError } from '@opco-proxy/core';
import { eventually } from '@opco-proxy/core/eventually';
import { startRelay, type Relay } from '@opco-proxy/core/tcp-relay';
import { createStore } from '../src/index.js';
import type { Store } from '@opco-proxy/core';

/**
 * FerretDB up, its PostgreSQL not: FerretDB answers every command with a generic InternalError
 * (code 1) naming its backend's failure. Those answers must reach clients as the store being
 * unavailable (503 with Retry-After), not as 500s. A FerretDB of the test's own sits on a
 * database of its own, reached through a TCP relay (refusing, freezing) and as a role whose
 * connection limit the test sets to 0 (PostgreSQL out of connection slots, SQLSTATE 53300).
 *
 * Needs FERRETDB_BIN (.ci/run exports it) and PostgreSQL as the PG* variables say.
 */
const bin = process.env.FERRETDB_BIN;
const pg = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: process.env.PGPORT ?? '5432',
  user: process.env.PGUSER ?? 'postgres',
};
const run = promisify(execFile);
const psql = (sql: string, database = 'postgres') =>
  run('psql', ['-XAtq', '-h', pg.host, '-p', pg.port, '-U', pg.user, '-d', database, '-c', sql]);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port: number, process: ChildProcess, output: () => string): Promise<void> {
  const open = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(() => resolve(true))).on('error', () =>
        resolve(false),
      );
    });
  await eventually(
    async () => {
      if (process.exitCode !== null) throw new Error(`FerretDB exited (${process.exitCode}): ${output()}`);
      return open();
    },
    () => `FerretDB to listen on ${port}: ${output()}`,
  );
}

/** Every kind of call a request makes fails as the store unavailable, each within `limitMs`. */
async function expectUnavailable(t: Test, store: Store, limitMs: number, why: string): Promise<void> {
  const docs = store.collection<{ _id: string; n: number }>('things');
  const calls: [string, () => Promise<unknown>][] = [
    ['findOne', () => docs.findOne({ _id: 'a' })],
    ['findOneAndUpdate', () => docs.findOneAndUpdate({ _id: 'a' }, { $inc: { n: 1 } })],
    ['insertOne', () => docs.insertOne({ _id: `b-${Date.now()}`, n: 0 })],
    ['count', () => docs.count({})],
  ];
  for (const [name, call] of calls) {
    const started = Date.now();
    const error = await call().then(
      () => undefined,
      (err: unknown) => err,
    );
    const ms = Date.now() - started;
    t.ok(
      error instanceof StoreUnavailableError,
      `${name}, ${why}: StoreUnavailableError (${String(error).slice(0, 160)})`,
    );
    t.ok(ms < limitMs, `${name} gave up within ${limitMs} ms (${ms} ms)`);
  }
  await t.rejects(store.ping(), 'ping (/ready) rejects');
}

if (!bin) {
  t.plan(0, 'needs FERRETDB_BIN (a FerretDB v1 binary: bash .ci/ferretdb.sh) and PostgreSQL');
} else {
  const id = `opco_backend_down_${process.pid}`;
  const role = `${id}_role`;
  let ferretdb: ChildProcess | undefined;
  let relay: Relay | undefined;
  let store: Store | undefined;

  t.before(async () => {
    await psql(`CREATE ROLE ${role} LOGIN`);
    await psql(`CREATE DATABASE ${id} OWNER ${role}`);
    relay = await startRelay(`postgres://${pg.host}:${pg.port}`, 5432);
    const port = await freePort();
    const pgUrl = `postgres://${role}@127.0.0.1:${new URL(relay.url).port}/${id}?pool_max_conns=8`;
    let output = '';
    ferretdb = spawn(
      bin,
      [
        '--handler=postgresql',
        `--postgresql-url=${pgUrl}`,
        `--listen-addr=127.0.0.1:${port}`,
        '--state-dir=-',
        '--debug-addr=-',
        '--telemetry=disable',
        '--log-level=error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    ferretdb.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    ferretdb.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
    await listening(port, ferretdb, () => output);
    // socketTimeoutMS: the frozen case below waits for it (the driver's default is 30 s, P18).
    store = await createStore({ url: `mongodb://127.0.0.1:${port}/down?directConnection=true&socketTimeoutMS=2000` });
  });

  t.teardown(async () => {
    await store?.close().catch(() => undefined);
    if (ferretdb && ferretdb.exitCode === null) {
      ferretdb.kill('SIGKILL');
      await new Promise((resolve) => ferretdb!.once('exit', resolve));
    }
    await relay?.close();
    await psql(`DROP DATABASE IF EXISTS ${id} WITH (FORCE)`).catch(() => undefined);
    await psql(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
  });

  /** The store answers again once PostgreSQL does: nothing to restart. */
  async function expectRecovered(t: Test): Promise<void> {
    const docs = store!.collection<{ _id: string; n: number }>('things');
    const found = await eventually(
      () => docs.findOne({ _id: 'a' }).catch(() => null),
      'the store to answer again',
      5000,
    ).catch(() => null);
    t.ok(found, 'answers again once PostgreSQL does');
  }

  t.test('PostgreSQL refuses connections', async (t) => {
    await store!.collection<{ _id: string; n: number }>('things').insertOne({ _id: 'a', n: 0 });
    relay!.refuse(true);
    relay!.cut();
    await expectUnavailable(t, store!, 5000, 'PostgreSQL down');
    relay!.refuse(false);
    await expectRecovered(t);
  });

  t.test('PostgreSQL out of connection slots (SQLSTATE 53300)', async (t) => {
    await psql(`ALTER ROLE ${role} CONNECTION LIMIT 0`);
    // FerretDB's open connections go (a restart of PostgreSQL would close them too).
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`);
    relay!.cut();
    await expectUnavailable(t, store!, 5000, 'no connection slot');
    await psql(`ALTER ROLE ${role} CONNECTION LIMIT -1`);
    await expectRecovered(t);
  });

  t.test('PostgreSQL stops answering on open connections', async (t) => {
    await store!.collection('things').findOne({ _id: 'a' });
    relay!.freeze(true);
    // The driver gives up after socketTimeoutMS, once more on retrying a read: 2 × 2 s here.
    await expectUnavailable(t, store!, 10_000, 'PostgreSQL frozen');
    relay!.freeze(false);
    relay!.cut();
    await expectRecovered(t);
  });
}
