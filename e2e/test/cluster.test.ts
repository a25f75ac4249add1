// Issue 31: the service on a three-node RabbitMQ cluster with replicated (quorum) queues, under a
// steady load of jobs with steps and webhook deliveries, while the node it is connected to is
// killed with SIGKILL, and then the node leading its job queues; each comes back and rejoins.
// Nothing accepted is lost, nothing reaches the upstream twice, every job completes and its
// webhook arrives, and the api answers 202 throughout or 503 with Retry-After while it reconnects.
//
// Runs only with RABBITMQ_CLUSTER_URLS and RABBITMQ_CLUSTER_DIR (.ci/rabbitmq-cluster.sh start DIR
// prints them; .ci/run runs this file once, in a step of its own) and MONGODB_URL.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import t, { type Test } from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  dossierBody,
  eventually,
  runCli,
  send,
  startReceiver,
  stopCli,
  waitForJob,
  writeConfig,
  KEY_A,
  PDF,
  TEST_MASTER_KEY,
  type CliProcess,
} from '../src/index.js';

const urls = process.env.RABBITMQ_CLUSTER_URLS?.split(',').filter(Boolean) ?? [];
const dir = process.env.RABBITMQ_CLUSTER_DIR;
const script = join(import.meta.dirname, '../../../.ci/rabbitmq-cluster.sh');
const run = promisify(execFile);
const skip =
  urls.length < 3 || !dir
    ? 'RABBITMQ_CLUSTER_URLS and RABBITMQ_CLUSTER_DIR are not set; see .ci/rabbitmq-cluster.sh'
    : !process.env.MONGODB_URL
      ? 'needs MONGODB_URL'
      : false;

/** One submission every `LOAD_INTERVAL_MS`, whatever the answers take: a steady offered load. */
const LOAD_INTERVAL_MS = 150;
/** Submissions in flight at most, each on its own connection. */
const MAX_IN_FLIGHT = 32;
/** Accepted jobs between two events of the scenario (a kill, a restart, the end). */
const BETWEEN = 20;
/** How long every accepted job has to end once the load stops. */
const DRAIN_MS = 150_000;

const portOf = (n: number) => Number(new URL(urls[n - 1]).port);
const nodeOf = (name: string) => Number(/^opco(\d)@/.exec(name)?.[1]);

async function ctl(n: number, ...args: string[]): Promise<any> {
  const { stdout } = await run(script, ['ctl', dir!, String(n), ...args, '--formatter', 'json', '--quiet']);
  return JSON.parse(stdout);
}

function kill(n: number): number {
  process.kill(Number(readFileSync(join(dir!, `node${n}`, 'pid'), 'utf8')), 'SIGKILL');
  return Date.now();
}

/** Starts node n again with the script and asks a surviving node whether it runs in the cluster again. */
async function restart(t: Test, n: number): Promise<void> {
  const { stdout } = await run(script, ['start-node', dir!, String(n)]);
  t.comment(stdout.trim());
  const status = await ctl(n === 1 ? 2 : 1, 'cluster_status');
  t.ok(
    status.running_nodes.includes(`opco${n}@localhost`),
    `opco${n} rejoined: running nodes ${status.running_nodes.join(', ')}`,
  );
}

/** The AMQP ports the service's connections use, as the cluster lists them. */
async function connectedPorts(from: number): Promise<number[]> {
  return [...new Set((await ctl(from, 'list_connections', 'port')).map((c: { port: number }) => c.port))] as number[];
}

interface Answer {
  sentAt: number;
  at: number;
  status: number;
  retryAfter: string | null;
}
interface Accepted {
  numeroExterne: string;
  jobId: string;
  statusUrl: string;
}

/** Submits a dossier with a file (two steps) every LOAD_INTERVAL_MS; a 503 is sent again with its Idempotency-Key. */
function steadyLoad(url: string) {
  const answers: Answer[] = [];
  const accepted: Accepted[] = [];
  const unexpected: string[] = [];
  const submissions: Promise<void>[] = [];
  const submit = async (i: number) => {
    const body = dossierBody({ _files: { cerfa: PDF.toString('base64') } });
    for (;;) {
      const sentAt = Date.now();
      const reply = await send(url, 'POST', '/sandbox/dossiers', {
        key: KEY_A,
        body,
        headers: { 'Idempotency-Key': `cluster-${i}` },
      }).catch((err: Error) => err);
      if (reply instanceof Error) return void unexpected.push(`${reply.message}: ${String(reply.cause)}`);
      answers.push({ sentAt, at: Date.now(), status: reply.status, retryAfter: reply.headers.get('retry-after') });
      if (reply.status === 202 || reply.status === 200) {
        if (!accepted.some((a) => a.jobId === reply.body.jobId))
          accepted.push({
            numeroExterne: body.cerfa.numeroExterne,
            jobId: reply.body.jobId,
            statusUrl: reply.body.statusUrl,
          });
        return;
      }
      if (reply.status !== 503) return void unexpected.push(`${reply.status} ${reply.text}`);
      await sleep(200);
    }
  };
  // A publisher's pool, bounded: past `server.maxConnectionsPerAddress` (64) connections the edge
  // answers 429 at accept (P21), which a slowed failover on a loaded machine reached.
  let inFlight = 0;
  const timer = setInterval(() => {
    if (inFlight >= MAX_IN_FLIGHT) return;
    inFlight += 1;
    submissions.push(submit(submissions.length).finally(() => (inFlight -= 1)));
  }, LOAD_INTERVAL_MS);
  return {
    answers,
    accepted,
    unexpected,
    async stop() {
      clearInterval(timer);
      await Promise.all(submissions);
    },
  };
}

/** Stretches of 503s: from the first 503's request to the next 2xx answer. */
function unavailableStretches(answers: Answer[]): { from: number; ms: number }[] {
  const stretches: { from: number; ms: number }[] = [];
  let from: number | undefined;
  for (const answer of [...answers].sort((a, b) => a.at - b.at)) {
    if (answer.status === 503) from ??= answer.sentAt;
    else if (from !== undefined) {
      stretches.push({ from, ms: answer.at - from });
      from = undefined;
    }
  }
  return stretches;
}

/** "reconnected" lines of the connection of `role` (publishing, consuming) the process has logged. */
const reconnections = (p: CliProcess, role: string) =>
  p
    .output()
    .split('\n')
    .filter((line) => line.includes('reconnected to RabbitMQ') && line.includes(`"role":"${role}"`)).length;

// About 30 s; up to DRAIN_MS more for the jobs and 75 s for deliveries waiting for the overdue
// sweep (below): past tap's 120 s.
if (!skip) t.setTimeout(360_000);
t.test(
  "kill -9 of the node in use, then of the queues' leader, under load: nothing lost, nothing sent twice",
  { skip },
  async (t) => {
    const began = Date.now();
    const id = `cluster_${Date.now()}_${randomBytes(3).toString('hex')}`;
    const sandbox = await startSandbox();
    const receiver = await startReceiver();
    // The job and webhook queues are declared through node 3 first, which makes it their leader
    // (RabbitMQ places a new quorum queue's leader on the declaring node), while the service
    // connects to node 1, the first URL that answers: the two kills hit different things.
    const declaring = await amqp.connect(urls[2]);
    const channel = await declaring.createChannel();
    for (const queue of ['jobs', 'webhook-deliveries']) {
      for (const level of [1, 5, 10])
        await channel.assertQueue(`${id}.${queue}.p${level}`, {
          durable: true,
          arguments: { 'x-queue-type': 'quorum' },
        });
    }
    await declaring.close();

    const file = writeConfig({
      mode: 'development',
      host: '127.0.0.1',
      port: 0,
      addressRateLimit: { perSecond: 10_000, burst: 10_000, freeFailures: 10_000 },
      store: { type: 'mongodb', url: process.env.MONGODB_URL, database: id },
      queue: { type: 'rabbitmq', url: urls, replicated: true, prefix: id },
      // One tenant: its jobs keep the whole prefetch, as in the harness (e2e/src/harness.ts). Over
      // a share, a backlog's messages are turned back with delays of up to 30 s at a lower
      // priority, and the oldest came last (seen on a slower machine: one job 114 s after its
      // submission). The share between tenants is e2e/test/fairness.test.ts's.
      jobs: { backoffMs: [100, 200, 400, 800, 1600], tenantShare: 1 },
      // The overdue sweep, every second here, re-queues a delivery 30 s past due (see below).
      webhooks: { retryDelaysMs: [200, 500, 1000, 2000], sweepIntervalMs: 1000 },
      opcos: {
        sandbox: {
          adapter: 'sandbox',
          baseUrl: sandbox.url,
          tokenUrl: sandbox.tokenUrl,
          clientId: 'cluster',
          clientSecretEnv: 'CLUSTER_SECRET',
          rateLimit: { limit: 1000, windowMs: 1000 },
        },
      },
    });
    const env = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, CLUSTER_SECRET: 's' };
    const api = runCli(['api', '--config', file], env);
    const worker = runCli(['worker', '--config', file], env);
    const processes = { api, worker };
    const down = new Set<number>();
    let stopping = false;
    let load: ReturnType<typeof steadyLoad> | undefined;
    t.teardown(async () => {
      stopping = true;
      await load?.stop();
      for (const [name, p] of Object.entries(processes)) {
        if (!t.passing()) {
          const whole = join(mkdtempSync(join(tmpdir(), 'opco-cluster-')), `${name}.log`);
          writeFileSync(whole, p.output());
          t.comment(`the ${name}'s last lines (all of them in ${whole}):\n${p.output().slice(-4000)}`);
        }
        await stopCli(p.child);
      }
      await sandbox.close();
      await receiver.close();
      for (const n of down) await run(script, ['start-node', dir!, String(n)]);
      const mine = (await ctl(1, 'list_queues', 'name'))
        .map((q: { name: string }) => q.name)
        .filter((name: string) => name.startsWith(`${id}.`));
      const deleting = await amqp.connect(urls[0]);
      const deleter = await deleting.createChannel();
      for (const name of mine) await deleter.deleteQueue(name);
      await deleting.close();
    });
    for (const [name, p] of Object.entries(processes)) {
      p.child.once(
        'exit',
        (code, signal) => stopping || t.fail(`the ${name} exited (${code ?? signal}): ${p.output().slice(-3000)}`),
      );
    }
    const url = await api.url;
    await worker.printed(/worker started/);
    const hook = await send(url, 'POST', '/webhooks', {
      key: KEY_A,
      body: { callbackUrl: `${receiver.url}/hook`, events: ['job.completed'] },
    });
    t.equal(hook.status, 201, hook.text);
    t.same(await connectedPorts(2), [portOf(1)], 'the service is connected to node 1');

    load = steadyLoad(url);
    const acceptedMore = async (count: number, what: string) => {
      const target = load.accepted.length + count;
      await eventually(
        () => load.accepted.length >= target || load.unexpected.length > 0,
        `${target} jobs accepted ${what}`,
        60_000,
      );
    };
    const kills: number[] = [];
    await acceptedMore(BETWEEN, 'before the first kill');

    // 1. The node the service is connected to.
    const reconnected = [reconnections(api, 'publishing'), reconnections(worker, 'consuming')];
    kills.push(kill(1));
    down.add(1);
    t.comment(`killed opco1 (the node in use) after ${load.accepted.length} accepted jobs`);
    await eventually(
      () => reconnections(api, 'publishing') > reconnected[0] && reconnections(worker, 'consuming') > reconnected[1],
      "the api's publishing and the worker's consuming connections reconnected",
      30_000,
    );
    t.comment(
      `the api's publishing and the worker's consuming connections reconnected ${Date.now() - kills[0]} ms after the kill`,
    );
    await acceptedMore(BETWEEN, 'after the first kill');
    await restart(t, 1);
    down.delete(1);

    // 2. The node leading the job queues, which the service is not connected to.
    const queues: { name: string; leader: string }[] = await ctl(2, 'list_queues', 'name', 'leader');
    const leader = nodeOf(queues.find((q) => q.name === `${id}.jobs.p5`)!.leader);
    const inUse = await connectedPorts(2);
    t.notOk(inUse.includes(portOf(leader)), `the leader, opco${leader}, is not a node in use (${inUse.join(', ')})`);
    const lost = /lost the connection to RabbitMQ/g;
    const losses = () => [api, worker].map((p) => (p.output().match(lost) ?? []).length);
    const lossesBefore = losses();
    kills.push(kill(leader));
    down.add(leader);
    t.comment(`killed opco${leader} (the job queues' leader) after ${load.accepted.length} accepted jobs`);
    await acceptedMore(BETWEEN, 'after the second kill');
    await restart(t, leader);
    down.delete(leader);
    await acceptedMore(BETWEEN, 'after the restart');
    await load.stop();
    const delivered = () =>
      new Set(receiver.received.filter((r) => r.body?.event === 'job.completed').map((r) => r.body.data.jobId));
    t.comment(
      `load stopped after ${Math.round((Date.now() - began) / 1000)} s: ${load.accepted.length} accepted, ${delivered().size} completed and delivered so far`,
    );
    t.same(losses(), lossesBefore, "the leader's loss cost no connection");

    // Every accepted job ends, completed; each dossier and its document reached the upstream once.
    t.same(load.unexpected, [], 'every answer was 202, 200 or 503');
    // One deadline for the backlog, not one per job: on FerretDB a slower machine drains 2 jobs a second.
    const drained = Date.now() + DRAIN_MS;
    const jobs: any[] = [];
    for (const accepted of load.accepted) {
      jobs.push(
        await waitForJob({ request: (method, path, o) => send(url, method, path, o) }, accepted.statusUrl, {
          key: KEY_A,
          timeoutMs: Math.max(5_000, drained - Date.now()),
        }),
      );
    }
    const completed = jobs.filter((job) => job.status === 'completed');
    const posts = (path: string, has: (r: (typeof sandbox.received)[number]) => boolean) =>
      sandbox.received.filter((r) => r.method === 'POST' && r.path === path && has(r));
    const duplicated = load.accepted.filter((accepted, i) => {
      const dossiers = posts('/v1/dossiers', (r) => (r.json as any)?.cerfa?.numeroExterne === accepted.numeroExterne);
      const numero = jobs[i].result?.numeroInterne;
      const documents = posts(
        '/v1/documents',
        (r) => Boolean(numero) && (r.parts ?? []).some((p) => p.content.toString().includes(numero)),
      );
      return dossiers.length !== 1 || documents.length !== 1;
    });
    t.equal(
      completed.length,
      load.accepted.length,
      `every accepted job completed (${completed.length} of ${load.accepted.length})`,
    );
    t.same(
      jobs.filter((job) => job.status !== 'completed').map((job) => job.status),
      [],
      'none lost or failed',
    );
    t.equal(duplicated.length, 0, 'each dossier and each document sent upstream exactly once');

    // Every job's job.completed webhook arrived. Seen in two runs of five: deliveries scheduled (200 ms
    // delay) just before a kill of the node leading their delay queue stayed in it (RabbitMQ 3.10
    // moves them only once that node is back, and then may wait for its dead-letter retry:
    // docs/decisions.md P17); the store still held them as due, and the overdue sweep re-queues
    // those 30 s past due (seen: the last one 43.6 s after the second kill, the others 11-13 s).
    // Hence up to 75 s here: the grace, the sweep's interval, and a margin for a loaded machine.
    await eventually(
      () => load.accepted.every((a) => delivered().has(a.jobId)),
      () => `${load.accepted.length - delivered().size} webhooks still to arrive`,
      75_000,
    ).catch(() => {});
    t.equal(
      load.accepted.filter((a) => !delivered().has(a.jobId)).length,
      0,
      `every job.completed webhook delivered (${delivered().size})`,
    );
    const deliveries = receiver.received.filter((r) => r.body?.event === 'job.completed');
    t.comment(
      `the last webhook arrived ${Math.max(...deliveries.map((r) => r.at)) - kills[1]} ms after the second kill`,
    );
    const twice = deliveries.length - new Set(deliveries.map((r) => r.headers['svc-delivery-id'])).size;

    // The api answered 202 (or 200, a 503'd submission sent again) throughout, else 503 with Retry-After, only after a kill.
    const unavailable = load.answers.filter((a) => a.status === 503);
    t.ok(
      unavailable.every((a) => a.retryAfter !== null && Number(a.retryAfter) > 0),
      'every 503 has Retry-After',
    );
    t.ok(
      unavailable.every((a) => a.at >= kills[0]),
      'no 503 before the first kill',
    );
    const stretches = unavailableStretches(load.answers);
    t.ok(stretches.length <= kills.length, `at most one stretch of 503s per kill (${stretches.length})`);
    const longest = Math.max(0, ...stretches.map((s) => s.ms));
    t.comment(
      `${load.answers.length} answers: ${load.accepted.length} jobs accepted, ${completed.length} completed, ${load.accepted.length - completed.length} lost, ${duplicated.length} duplicated upstream; ` +
        `${unavailable.length} answers 503, longest 503 stretch ${longest} ms; ${delivered().size} webhooks delivered, ${twice} twice; suite ${Math.round((Date.now() - began) / 1000)} s`,
    );
  },
);
