// The service under measurement: the real CLI (`opco-proxy serve --config FILE`) as its own
// process, in production mode with the embedded store, its logs (level info) to /dev/null, in
// front of a fast upstream that replays answers recorded from the sandbox.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { freePort, startProcess, waitForHttp, SERVICE_CPU, LOAD_CPU } from './processes.mjs';

/**
 * The checkout whose build runs as the service: this one, or BENCH_SERVICE_ROOT (bench/compare.mjs
 * sets it to a ref's worktree; a ref from before the server package has only core's cli.js).
 */
export const SERVICE_ROOT = process.env.BENCH_SERVICE_ROOT
  ? resolve(process.env.BENCH_SERVICE_ROOT)
  : fileURLToPath(new URL('../..', import.meta.url));
export const cliOf = (root) =>
  [join(root, 'server/dist/src/cli.js'), join(root, 'core/dist/src/cli.js')].find((file) => existsSync(file)) ??
  join(root, 'server/dist/src/cli.js');
export const CLI = cliOf(SERVICE_ROOT);
export const TENANT_KEY = 'bench-tenant-key-0001';
const MASTER_KEY = '0f'.repeat(32);
const LIB = fileURLToPath(new URL('.', import.meta.url));

/**
 * Records the sandbox's token answer and one page of `GET /v2/dossiers/etats` (pageSize sets its
 * size: 100 records make about 12 KB, as the service answers them) into files a fast upstream replays.
 */
export async function recordUpstream({ pageSize = 100 } = {}) {
  const sandbox = await startSandbox({ pageSize });
  try {
    const tokenAnswer = await fetch(sandbox.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=bench&client_secret=bench',
    });
    const tokenText = await tokenAnswer.text();
    if (!tokenAnswer.ok) throw new Error(`sandbox token answer ${tokenAnswer.status}: ${tokenText}`);
    const page = await fetch(`${sandbox.url}/v2/dossiers/etats?numeroPage=1`, {
      headers: { authorization: `Bearer ${JSON.parse(tokenText).access_token}`, 'x-api-key': TENANT_KEY },
    });
    const pageText = await page.text();
    if (!page.ok) throw new Error(`sandbox etats answer ${page.status}: ${pageText}`);
    const dir = mkdtempSync(join(tmpdir(), 'bench-upstream-'));
    writeFileSync(join(dir, 'token.json'), tokenText);
    writeFileSync(join(dir, 'etats.json'), pageText);
    return {
      tokenFile: join(dir, 'token.json'),
      bodyFile: join(dir, 'etats.json'),
      bytes: Buffer.byteLength(pageText),
    };
  } finally {
    await sandbox.close();
  }
}

/** The replaying upstream, on the load generator's core (it is the fast part of the setup). */
export async function startFixedUpstream(recorded) {
  const port = await freePort();
  const proc = startProcess({
    name: 'upstream',
    command: process.execPath,
    args: [
      join(LIB, 'fixed-upstream.mjs'),
      '--port',
      String(port),
      '--body',
      recorded.bodyFile,
      '--token',
      recorded.tokenFile,
    ],
    cpu: LOAD_CPU,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, proc);
  return { ...proc, url };
}

/** A Node script of bench/lib as a process on the service core (the baselines). */
export async function startLibProcess(name, script, args) {
  const port = await freePort();
  const proc = startProcess({
    name,
    command: process.execPath,
    args: [join(LIB, script), '--port', String(port), ...args],
    cpu: SERVICE_CPU,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(url, proc);
  return { ...proc, url };
}

/**
 * opco-proxy serving the `sandbox` profile against `upstreamUrl`. `cacheTtlS` 0 makes the etats
 * route uncached; the tenant rate limit is lifted so the load generator's one key is never
 * refused; `rateLimit` is the upstream budget (every call claims one of its slots).
 */
export async function startOpcoProxy({
  upstreamUrl,
  cacheTtlS = 300,
  rateLimit = { limit: 60, windowMs: 60_000 },
  config = {},
  nodeArgs = [],
  env = {},
  cli = CLI,
}) {
  const port = await freePort();
  const file = join(mkdtempSync(join(tmpdir(), 'bench-config-')), 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      mode: 'production',
      host: '127.0.0.1',
      port,
      logLevel: 'info',
      tenantRateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
      // The bench's key is new to the upstream: its first requests are unproven (P13), and a burst
      // of them would meet the address limit meant for strangers (bench/edge-attacks.mjs measures that).
      addressRateLimit: { perSecond: 1_000_000, burst: 1_000_000 },
      ...config,
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: upstreamUrl,
          tokenUrl: `${upstreamUrl}/oauth/token`,
          clientId: 'bench',
          clientSecretEnv: 'BENCH_UPSTREAM_SECRET',
          rateLimit,
          cacheTtlS: { 'GET /dossiers/etats': cacheTtlS },
        },
      },
    }),
  );
  const proc = startProcess({
    name: 'opco-proxy',
    command: process.execPath,
    args: [...nodeArgs, cli, 'serve', '--config', file],
    cpu: SERVICE_CPU,
    env: { OPCO_PROXY_MASTER_KEY: MASTER_KEY, BENCH_UPSTREAM_SECRET: 'bench', ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/health`, proc);
  return { ...proc, url, headers: { 'x-api-key': TENANT_KEY } };
}
