// Issue 30, end to end against a real registry: the release command publishes every package of
// this clone to Verdaccio; then, in empty directories outside the clone and with npm pointed at
// Verdaccio alone, an integrator writes, tests and publishes an adapter (`npm create`), and an
// operator installs the service with it and serves `GET /acme/dossiers/etats` through it against
// the sandbox installed from the registry, then runs demo mode from the same bare install.
// Runs where Node is 22 or later (Verdaccio 6, Lerna 10): CI's Node 24 pass.
import t from 'tap';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  REGISTRY_NODE_MAJOR,
  TEST_MASTER_KEY,
  runStep,
  spawnGroup,
  startRegistry,
  stopGroup,
  watchProcess,
  type Step,
} from '../src/index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const ADAPTER = '@acme/opco-proxy-adapter-acme';

function skipReason(): string | false {
  if (Number(process.versions.node.split('.')[0]) < REGISTRY_NODE_MAJOR)
    return `Verdaccio and Lerna need Node ${REGISTRY_NODE_MAJOR}+ (this is ${process.version}); CI's Node 24 pass runs this file`;
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], {
    cwd: ROOT,
    encoding: 'utf8',
  }).stdout.trim();
  // A release publishes committed work only (Lerna refuses a modified tree); CI's clone is clean.
  if (dirty && !process.env.CI) return `the working tree has uncommitted changes, which a release refuses:\n${dirty}`;
  return false;
}

/** The packages a release publishes: every workspace package but the private ones. */
function publicPackages(): Array<{ name: string; version: string }> {
  const workspaces = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] })
    .workspaces;
  const dirs = workspaces.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(join(ROOT, pattern.slice(0, -2))).map((name) => join(pattern.slice(0, -2), name))
      : [pattern],
  );
  return dirs
    .filter((dir) => existsSync(join(ROOT, dir, 'package.json')))
    .map(
      (dir) =>
        JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
          name: string;
          version: string;
          private?: boolean;
        },
    )
    .filter((pkg) => !pkg.private)
    .map(({ name, version }) => ({ name, version }));
}

const skip = skipReason();
// The journeys install the service's dependencies through Verdaccio: minutes, not tap's 120 s.
if (!skip) t.setTimeout(25 * 60_000);
t.test(
  'published packages: an integrator and an operator outside the clone, against Verdaccio',
  { skip },
  async (t) => {
    const base = mkdtempSync(join(tmpdir(), 'opco-registry-'));
    for (const dir of ['registry', 'integrator', 'operator']) mkdirSync(join(base, dir));
    const started: ChildProcess[] = [];
    // Every process first, then the registry, then the files.
    t.teardown(async () => {
      for (const child of started) await stopGroup(child);
      rmSync(base, { recursive: true, force: true });
    });
    const uplink =
      spawnSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).stdout.trim() ||
      'https://registry.npmjs.org/';
    const registry = await startRegistry(join(base, 'registry'), process.execPath, uplink);
    started.push(registry.process);
    const { env } = registry;
    const timings: string[] = [];
    const step = async (label: string, command: string, args: string[], cwd: string): Promise<Step> => {
      const result = await runStep(command, args, { cwd, env });
      timings.push(`${label}: ${result.seconds} s`);
      t.equal(result.code, 0, `${label} (${result.seconds} s)`, { output: result.out.slice(-4000) });
      if (result.code !== 0) throw new Error(`${label} failed:\n${result.out.slice(-4000)}`);
      return result;
    };
    t.teardown(() => void t.comment(`timings: ${timings.join('; ')}`));

    // The maintainers' release command (docs/releasing.md), here aimed at Verdaccio.
    await step(
      'lerna publish from-package',
      'bash',
      ['.ci/lerna.sh', 'publish', 'from-package', '--yes', '--no-progress', '--registry', registry.url],
      ROOT,
    );
    for (const { name, version } of publicPackages()) {
      const answer = await fetch(`${registry.url}${name.replace('/', '%2f')}`);
      const doc = (await answer.json()) as { versions?: Record<string, unknown> };
      t.ok(answer.ok && doc.versions?.[version], `${name}@${version} is on the registry`);
    }

    // The integrator (docs/adapters.md): npm create, npm install, npm test, npm publish.
    const integrator = join(base, 'integrator');
    await step('npm create @opco-proxy/adapter', 'npm', ['create', '@opco-proxy/adapter@latest', ADAPTER], integrator);
    const adapterDir = join(integrator, 'acme');
    await step('npm install (integrator)', 'npm', ['install'], adapterDir);
    const lock = readFileSync(join(adapterDir, 'package-lock.json'), 'utf8');
    t.match(
      lock,
      new RegExp(`"node_modules/@opco-proxy/adapter-kit": \\{\\s*"version": "[^"]+",\\s*"resolved": "${registry.url}`),
      'the kit came from the registry',
    );
    const test = await step('npm test (integrator)', 'npm', ['test'], adapterDir);
    t.match(test.out, /# \{ total: (\d+), pass: \1 \}/, 'the conformance suite ran, every test passed');
    await step('npm publish (integrator)', 'npm', ['publish'], adapterDir);

    // The operator (README, "Install without a clone"): the server and the adapter, a config, npx.
    const operator = join(base, 'operator');
    await step('npm install (operator)', 'npm', ['install', '@opco-proxy/server', ADAPTER], operator);
    const start = (args: string[], extra: NodeJS.ProcessEnv = {}) => {
      const child = spawnGroup('npx', args, { cwd: operator, env: { ...env, ...extra } });
      started.unshift(child);
      return watchProcess(child);
    };
    const sandbox = await start(['opco-proxy-sandbox', '--port', '0']).url;
    writeFileSync(
      join(operator, 'config.json'),
      JSON.stringify({
        host: '127.0.0.1',
        port: 0,
        opcos: {
          acme: {
            adapter: ADAPTER,
            baseUrl: sandbox,
            tokenUrl: `${sandbox}/oauth/token`,
            clientId: 'acme-client',
            clientSecretEnv: 'ACME_SECRET',
          },
        },
      }),
    );
    const service = await start(['opco-proxy', 'serve', '--config', 'config.json'], {
      OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY,
      ACME_SECRET: 'acme-secret',
    }).url;
    const etats = await fetch(`${service}/acme/dossiers/etats`, { headers: { 'X-API-KEY': 'operator-tenant-0001' } });
    const page = (await etats.json()) as { EtatDossierResult?: unknown[] };
    t.equal(etats.status, 200, 'GET /acme/dossiers/etats through the published adapter');
    t.ok(
      Array.isArray(page.EtatDossierResult) && page.EtatDossierResult.length > 0,
      "the sandbox's dossiers, through the adapter",
    );

    const demo = await start(['opco-proxy', '--port', '0']).url;
    const demoRead = await fetch(`${demo}/sandbox/dossiers/etats`, { headers: { 'X-API-KEY': 'demo-key-123' } });
    t.equal(demoRead.status, 200, 'demo mode answers from a bare install');
    t.equal((await fetch(`${demo}/console`)).status, 200, 'the console page ships in the package');
  },
);
