/**
 * The public-edge attacks of issue 27, replayed against the real service as a process: an OPCO
 * limited to 30 calls per 10 s, a sandbox upstream that knows only its CFAs' keys, a legitimate
 * CFA reading 2 uncached answers a second from 127.0.0.1, and a stranger sending 20 requests a
 * second from one other address (127.0.0.2: Linux routes all of 127/8 to loopback) with keys it
 * invented. The scene reports what the CFA got, what the stranger got, and how often each
 * stranger's key reached the upstream.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { startSandbox, type Sandbox } from '@opco-proxy/adapter-sandbox';
import { runCli, stopCli, writeConfig, type CliProcess } from './processes.js';
import { TEST_MASTER_KEY } from './harness.js';
import type { HubProcess } from './hub-process.js';

export const CFA_KEY = 'cfa-legit-key-0001';
export const EDGE_RATE_LIMIT = { limit: 30, windowMs: 10_000 };
const STRANGER_ADDRESS = '127.0.0.2';

export type Attack = 'none' | 'random keys' | '50 invalid keys reused';

export interface SceneOptions {
  /** Store and queue (embedded by default). */
  backends?: Record<string, unknown>;
  /** Behind this hub, with a key of its own. */
  hub?: HubProcess;
  /** More config keys (tenantRateLimit, allowedTenants, tenantKeys, ...). */
  config?: Record<string, unknown>;
}

export interface AttackOutcome {
  attack: Attack;
  cfa: { sent: number; answered: number; statuses: Record<string, number> };
  stranger: { sent: number; statuses: Record<string, number> };
  /** Upstream calls per stranger key during the attack, the most any key got. */
  mostCallsOfOneKey: number;
  strangerUpstreamCalls: number;
  /**
   * Of them, those the upstream received before the stranger's first 403 came back: made while
   * no stranger was known at the opcoId yet, in the calm slice (P13). A loaded machine has more
   * of them in flight at once.
   */
  strangerOnsetCalls: number;
}

export interface EdgeScene {
  url: string;
  sandbox: Sandbox;
  process: CliProcess;
  /** The CFA's first call: its key becomes proven, as a CFA that used the service before. */
  warmUp(): Promise<number>;
  attack(attack: Attack, durationMs: number): Promise<AttackOutcome>;
  metrics(): Promise<string>;
  close(): Promise<void>;
}

export async function startEdgeScene(options: SceneOptions = {}): Promise<EdgeScene> {
  const sandbox = await startSandbox({ acceptedKeys: [CFA_KEY] });
  const env: Record<string, string> = { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, EDGE_SANDBOX_SECRET: 'test-secret' };
  const config: Record<string, unknown> = {
    mode: 'development',
    host: '127.0.0.1',
    port: 0,
    shutdownGraceMs: 2000,
    // No cache: every read of the CFA is an upstream call, as in the measurements.
    plugins: ['jobs', 'webhooks', 'sync'],
    opcos: {
      sandbox: {
        adapter: 'sandbox',
        baseUrl: sandbox.url,
        tokenUrl: sandbox.tokenUrl,
        clientId: 'edge',
        clientSecretEnv: 'EDGE_SANDBOX_SECRET',
        rateLimit: EDGE_RATE_LIMIT,
      },
    },
    ...options.backends,
    ...options.config,
  };
  if (options.hub) {
    const created = await options.hub.key('edge-publisher', 'edge-instance');
    env.EDGE_HUB_KEY = created.key;
    config.plugins = [...(config.plugins as string[]), 'hub'];
    config.hub = { url: options.hub.url.replace(/^http/, 'ws'), apiKeyEnv: 'EDGE_HUB_KEY', maxWaitMs: 3000 };
  }
  const child = runCli(['serve', '--config', writeConfig(config)], env);
  let url: string;
  try {
    url = await child.url;
  } catch (err) {
    await sandbox.close();
    throw err;
  }
  const stranger = new Agent({ localAddress: STRANGER_ADDRESS, connections: 64 });
  const cfa = new Agent({ connections: 16 });
  const get = async (agent: Agent, key: string): Promise<number> => {
    try {
      const answer = await request(`${url}/sandbox/dossiers/etats`, {
        dispatcher: agent,
        headers: { 'x-api-key': key },
        headersTimeout: 60_000,
      });
      await answer.body.dump();
      return answer.statusCode;
    } catch {
      return 0; // no answer at all
    }
  };
  return {
    url,
    sandbox,
    process: child,
    warmUp: () => get(cfa, CFA_KEY),
    async attack(attack, durationMs) {
      const reused = Array.from(
        { length: 50 },
        (_, i) => `stranger-reused-${String(i).padStart(2, '0')}-${randomBytes(3).toString('hex')}`,
      );
      const strangerKey = (n: number) =>
        attack === 'random keys' ? `stranger-${randomBytes(8).toString('hex')}` : reused[n % reused.length];
      const receivedBefore = sandbox.received.length;
      const cfaAnswers: Promise<number>[] = [];
      const strangerAnswers: Promise<number>[] = [];
      let firstRefusalAt = Infinity;
      const strangerGet = (key: string) =>
        get(stranger, key).then((status) => {
          if (status === 403) firstRefusalAt = Math.min(firstRefusalAt, Date.now());
          return status;
        });
      const started = Date.now();
      // Sent on a fixed schedule, never waiting for answers: 2/s for the CFA, 20/s for the stranger.
      for (let tick = 0; Date.now() - started < durationMs; tick++) {
        if (tick % 10 === 0) cfaAnswers.push(get(cfa, CFA_KEY));
        if (attack !== 'none') strangerAnswers.push(strangerGet(strangerKey(tick)));
        const next = started + (tick + 1) * 50;
        await sleep(Math.max(0, next - Date.now()));
      }
      const cfaStatuses = await Promise.all(cfaAnswers);
      const strangerStatuses = await Promise.all(strangerAnswers);
      const perKey = new Map<string, number>();
      let onset = 0;
      for (const call of sandbox.received.slice(receivedBefore)) {
        const key = String(call.headers['x-api-key']);
        if (key === CFA_KEY) continue;
        perKey.set(key, (perKey.get(key) ?? 0) + 1);
        if (call.at <= firstRefusalAt) onset++;
      }
      return {
        attack,
        cfa: {
          sent: cfaStatuses.length,
          answered: cfaStatuses.filter((s) => s === 200).length,
          statuses: histogram(cfaStatuses),
        },
        stranger: { sent: strangerStatuses.length, statuses: histogram(strangerStatuses) },
        mostCallsOfOneKey: Math.max(0, ...perKey.values()),
        strangerUpstreamCalls: [...perKey.values()].reduce((sum, n) => sum + n, 0),
        strangerOnsetCalls: onset,
      };
    },
    async metrics() {
      const answer = await request(`${url}/metrics`);
      return answer.body.text();
    },
    async close() {
      await stopCli(child.child);
      await Promise.all([stranger.close(), cfa.close()]);
      await sandbox.close();
    },
  };
}

function histogram(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** One line of the table: `random keys: CFA 24/24 (200×24); stranger 240 (429×231, 403×9); 9 upstream calls, at most 1 per key`. */
export function describeOutcome(outcome: AttackOutcome): string {
  const shown = (statuses: Record<string, number>) =>
    Object.entries(statuses)
      .map(([status, n]) => `${status}×${n}`)
      .join(', ');
  return (
    `${outcome.attack}: CFA ${outcome.cfa.answered}/${outcome.cfa.sent} (${shown(outcome.cfa.statuses)}); stranger ${outcome.stranger.sent} (${shown(outcome.stranger.statuses)}); ` +
    `${outcome.strangerUpstreamCalls} stranger calls upstream (${outcome.strangerOnsetCalls} before its first 403), at most ${outcome.mostCallsOfOneKey} per key`
  );
}
