// What an operator watches (docs/operations.md, Alerts and dashboard): every metric that
// deploy/prometheus/alerts.yml and deploy/grafana/opco-proxy.json name is one the processes
// really export, read from the /metrics of a `serve` process with every plugin (the hub's
// included), of the hub, and of a `worker` serving /metrics alone on METRICS_PORT (its only
// door: anything else is 404). A renamed metric, a job the alerts name that prometheus.yml
// does not scrape, or an alert docs/operations.md does not explain, fails here.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { runCli, stopCli, writeConfig, startHubProcess, TEST_MASTER_KEY } from '../src/index.js';

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));

/** Names a scrape can hold: each metric's TYPE line, and a histogram's series names. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
  }
  return names;
}

/** Every PromQL expression of the dashboard: its panels' targets, rows' panels included. */
function dashboardExpressions(dashboard: any): string[] {
  const panels = (list: any[]): any[] => list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])]);
  return panels(dashboard.panels).flatMap((panel) => (panel.targets ?? []).map((target: any) => target.expr as string));
}

t.test('the alerts and the dashboard name only metrics the service exports', async (t) => {
  const sandbox = await startSandbox();
  const hub = await startHubProcess({ opcos: { sandbox: { limit: 100, windowMs: 1000 } }, logLevel: 'warn' });
  const { key } = await hub.key('publisher', 'monitoring');
  const opcos = {
    sandbox: {
      adapter: 'sandbox',
      baseUrl: sandbox.url,
      tokenUrl: sandbox.tokenUrl,
      clientId: 'monitoring',
      clientSecretEnv: 'MONITORING_SECRET',
    },
  };
  const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, MONITORING_SECRET: 's', HUB_KEY: key };
  const serve = runCli(
    [
      'serve',
      '--config',
      writeConfig({
        host: '127.0.0.1',
        port: 0,
        mode: 'development',
        opcos,
        plugins: ['cache', 'jobs', 'webhooks', 'sync', 'hub'],
        hub: { url: hub.url.replace(/^http/, 'ws'), apiKeyEnv: 'HUB_KEY', expectedInstances: 1 },
      }),
    ],
    env,
  );
  const worker = runCli(['worker', '--config', writeConfig({ host: '127.0.0.1', mode: 'development', opcos })], {
    ...env,
    METRICS_PORT: '0',
  });
  t.teardown(async () => {
    await Promise.all([stopCli(serve.child), stopCli(worker.child), hub.stop()]);
    await sandbox.close();
  });

  await worker.printed(/worker started/);
  const workerMetrics = /"metrics":"(http:\/\/[^"]+)"/.exec(worker.output())?.[1];
  t.ok(workerMetrics, 'the worker logs where its /metrics is');
  const scraped = async (url: string) => {
    const res = await fetch(url);
    t.equal(res.status, 200, `${url} answers`);
    return res.text();
  };
  const workerText = await scraped(workerMetrics!);
  t.match(workerText, /^# TYPE opco_proxy_jobs_ended_total counter$/m, 'the worker exports what only workers count');
  t.equal((await fetch(workerMetrics!.replace(/\/metrics$/, '/health'))).status, 404, 'the worker serves nothing else');

  const serveUrl = await serve.url;
  const names = new Set([
    ...exportedNames(await scraped(`${serveUrl}/metrics`)),
    ...exportedNames(workerText),
    ...exportedNames(await scraped(`${hub.url}/metrics`)),
  ]);
  t.ok(
    names.has('opco_proxy_hub_connection_state') && names.has('opco_proxy_hub_grants_total'),
    "the hub plugin's and the hub's metrics are read",
  );

  const alerts = readFileSync(repo('deploy/prometheus/alerts.yml'), 'utf8');
  const dashboard = JSON.parse(readFileSync(repo('deploy/grafana/opco-proxy.json'), 'utf8'));
  const expressions = dashboardExpressions(dashboard);
  t.ok(expressions.length >= 10, `the dashboard has queries (${expressions.length})`);
  for (const [where, text] of [
    ['alerts.yml', alerts],
    ['opco-proxy.json', expressions.join('\n')],
  ] as const) {
    const used = new Set(text.match(/\bopco_proxy_[a-z0-9_]+/g));
    const unknown = [...used].filter((name) => !names.has(name));
    t.same(unknown, [], `${where}: its ${used.size} metrics are all exported`);
  }

  const scrapeJobs = new Set(
    [...readFileSync(repo('deploy/prometheus/prometheus.yml'), 'utf8').matchAll(/job_name: (\S+)/g)].map((m) => m[1]),
  );
  const namedJobs = [...alerts.matchAll(/job(?:=~?)"([^"]+)"/g)].flatMap((m) => m[1].split('|'));
  t.ok(namedJobs.length > 0, 'the alerts name scrape jobs');
  t.same(
    namedJobs.filter((job) => !scrapeJobs.has(job)),
    [],
    `the jobs the alerts name are scraped (${[...scrapeJobs].join(', ')})`,
  );
});

t.test('docs/operations.md explains every alert, and only those', async (t) => {
  const alerts = [...readFileSync(repo('deploy/prometheus/alerts.yml'), 'utf8').matchAll(/- alert: (\S+)/g)].map(
    (m) => m[1],
  );
  const doc = readFileSync(repo('docs/operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Alerts and dashboard'));
  const explained = [...section.matchAll(/^\| `([A-Za-z0-9]+)` \|/gm)].map((m) => m[1]);
  t.ok(alerts.length > 10, `${alerts.length} alerts`);
  t.same(explained, alerts, "the table lists the alerts in the file's order");
});
