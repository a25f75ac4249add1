// Adapters are found where operators install them (issue 30, docs/adapters.md "Where the service
// finds a package"): a package installed beside the config file, or in the working directory, or
// a path relative to the config file, named in the config and loaded by the real CLI; a package
// found nowhere is refused naming every place looked in.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, TEST_MASTER_KEY, runCli, stopCli } from '../src/index.js';

const CORE = fileURLToPath(new URL('../../../core', import.meta.url));
const PACKAGE = '@acme/opco-proxy-adapter-plain';

/** An integrator's adapter in plain JavaScript, exported for `import` only (no `require` condition). */
const ADAPTER_SOURCE = `import { apiKeyHeader } from '@opco-proxy/core';
export const profile = {
  id: 'plain', versions: ['v1'], rateLimit: { limit: 100, windowMs: 60000 },
  auth: apiKeyHeader({ header: 'X-Gateway-Key' }),
  routes: { 'GET /dossiers/etats': { upstream: '/etats' } },
};
export default { profile };
`;

function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** An operator's directory: the adapter and its peer dependency @opco-proxy/core installed in node_modules. */
function operatorDir(t: Test): string {
  const dir = tempDir(t, 'opco-operator-');
  const pkg = join(dir, 'node_modules', PACKAGE);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({ name: PACKAGE, version: '1.0.0', type: 'module', exports: { '.': { import: './index.mjs' } } }),
  );
  writeFileSync(join(pkg, 'index.mjs'), ADAPTER_SOURCE);
  mkdirSync(join(dir, 'node_modules', '@opco-proxy'));
  symlinkSync(CORE, join(dir, 'node_modules', '@opco-proxy', 'core'));
  return dir;
}

function config(dir: string, adapter: string, baseUrl = 'http://127.0.0.1:9'): string {
  const file = join(dir, 'config.json');
  writeFileSync(
    file,
    JSON.stringify({
      mode: 'development',
      host: '127.0.0.1',
      port: 0,
      logLevel: 'info',
      plugins: [],
      opcos: { plain: { adapter, baseUrl, apiKeyEnv: 'PLAIN_KEY' } },
    }),
  );
  return file;
}

async function check(file: string, cwd: string): Promise<{ code: number; out: string }> {
  const proc = runCli(['config', 'check', file], { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, PLAIN_KEY: 'k' }, CLI, cwd);
  const [code] = await once(proc.child, 'close');
  return { code: code as number, out: proc.output() };
}

t.test('a package installed beside the config file is found from any working directory', async (t) => {
  const operator = operatorDir(t);
  const result = await check(config(operator, PACKAGE), tempDir(t, 'opco-cwd-'));
  t.equal(result.code, 0, result.out);
  t.match(result.out, /valid/);
});

t.test('a package installed in the working directory is found for a config kept elsewhere', async (t) => {
  const result = await check(config(tempDir(t, 'opco-etc-'), PACKAGE), operatorDir(t));
  t.equal(result.code, 0, result.out);
});

t.test('a path relative to the config file names a plain JavaScript adapter', async (t) => {
  const operator = operatorDir(t);
  mkdirSync(join(operator, 'adapters'));
  writeFileSync(join(operator, 'adapters', 'plain.mjs'), ADAPTER_SOURCE);
  const result = await check(config(operator, './adapters/plain.mjs'), tempDir(t, 'opco-cwd-'));
  t.equal(result.code, 0, result.out);
});

t.test('a package found nowhere is refused, naming the places looked in, in order', async (t) => {
  const etc = tempDir(t, 'opco-etc-');
  const cwd = tempDir(t, 'opco-cwd-');
  const result = await check(config(etc, PACKAGE), cwd);
  t.equal(result.code, 1);
  t.ok(
    result.out.includes(
      `opcos.plain.adapter: adapter package "${PACKAGE}" is not installed (looked in ${etc}, ${cwd}, the service's own installation)`,
    ),
    result.out,
  );
});

t.test('serve answers through an adapter installed beside the config, started from elsewhere', async (t) => {
  const upstream = createServer((req, res) => {
    const known = req.url === '/etats' && req.headers['x-gateway-key'] === 'k';
    res
      .writeHead(known ? 200 : 404, { 'content-type': 'application/json' })
      .end(JSON.stringify(known ? { status: 'ok', EtatDossierResult: [] } : { message: 'no' }));
  }).listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  t.teardown(() => void upstream.close());
  const baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const proc = runCli(
    ['serve', '--config', config(operatorDir(t), PACKAGE, baseUrl)],
    { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, PLAIN_KEY: 'k' },
    CLI,
    tempDir(t, 'opco-cwd-'),
  );
  t.teardown(() => stopCli(proc.child));
  const url = await proc.url;
  const answer = await fetch(`${url}/plain/dossiers/etats`, { headers: { 'X-API-KEY': 'tenant-key-0001' } });
  t.equal(answer.status, 200, await answer.clone().text());
  t.match(await answer.json(), { EtatDossierResult: [] });
});
