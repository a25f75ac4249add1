// The alerting rules and the scrape config (deploy/prometheus/) as Prometheus reads them:
// `promtool check rules`, `promtool check config` and the rules' unit tests (`promtool test
// rules alerts.test.yml`: each alert firing and quiet). A copy of the rules with one threshold
// moved must fail those tests, so they do test something. promtool is Debian's `prometheus`
// package: locally the test is skipped without it; in CI (`CI` set, .ci/run installs it) a
// missing promtool fails it.
import t from 'tap';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';
const DIR = fileURLToPath(new URL('../../../deploy/prometheus/', import.meta.url));

function promtoolSkip(): string | undefined {
  if (existsSync(PROMTOOL)) return undefined;
  if (process.env.CI)
    throw new Error(
      `${PROMTOOL} is missing: CI must check the alerting rules (.ci/run installs the prometheus package)`,
    );
  return `${PROMTOOL} is not installed (apt-get install --no-install-recommends prometheus): the rules are not checked on this machine`;
}

function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(PROMTOOL, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: stdout + stderr });
    });
  });
}

const skip = promtoolSkip();

t.test('promtool accepts the rules and the scrape config, and the rules pass their unit tests', { skip }, async (t) => {
  for (const args of [
    ['check', 'rules', join(DIR, 'alerts.yml')],
    ['check', 'config', join(DIR, 'prometheus.yml')],
    ['test', 'rules', join(DIR, 'alerts.test.yml')],
  ]) {
    const { code, output } = await promtool(...args);
    t.equal(code, 0, `promtool ${args.slice(0, 2).join(' ')} ${args[2].slice(DIR.length)}\n${output}`);
  }
});

t.test('a moved threshold fails the unit tests', { skip }, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'opco-rules-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  copyFileSync(join(DIR, 'alerts.test.yml'), join(work, 'alerts.test.yml'));
  const rules = readFileSync(join(DIR, 'alerts.yml'), 'utf8');
  t.ok(
    rules.includes('max(opco_proxy_oldest_pending_job_age_seconds) > 600'),
    'the backlog rule is where the test expects it',
  );
  writeFileSync(
    join(work, 'alerts.yml'),
    rules.replace(
      'max(opco_proxy_oldest_pending_job_age_seconds) > 600',
      'max(opco_proxy_oldest_pending_job_age_seconds) > 6000',
    ),
  );
  const { code, output } = await promtool('test', 'rules', join(work, 'alerts.test.yml'));
  t.not(code, 0, 'promtool test rules fails');
  t.match(output, /alertname: OpcoProxyJobBacklog/, 'on the backlog alert');
});
