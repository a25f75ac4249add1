/**
 * Service instances behind one hub, against one counting sandbox upstream: each instance is an
 * in-process kernel with `plugins: [..., "hub"]` and its own hub key. Its publisher headers name
 * it upstream (`EDITEUR` = fleet, `LOGICIEL` = instance name), so every call the upstream
 * received can be put to the instance and the fleet that made it, granted or not.
 */
import { systemClock, type Store } from '@opco-proxy/core';
import { TenantStanding } from '@opco-proxy/core/limits';
import { authenticate, DEFAULTS, type Config } from '@opco-proxy/core/application';
import type { ReceivedRequest, Sandbox } from '@opco-proxy/adapter-sandbox';
import { KEY_A, KEY_B, startService, type Service } from './harness.js';
import { eventually } from './eventually.js';
import type { HubProcess, RateLimit } from './hub-process.js';

export interface MemberSpec {
  name: string;
  /** The fleet its key belongs to (one publisher's credentials). */
  fleetId: string;
  expectedInstances?: number;
}

export interface GroupMember extends MemberSpec {
  service: Service;
  keyId: string;
  /** The hub key itself, to look for it in logs and stored documents. */
  hubKey: string;
}

export interface InstanceGroupOptions {
  hub: HubProcess;
  /** The instances' `hub.url` as a list (failover); default the hub's own address. */
  hubUrls?: string[];
  upstream: Sandbox;
  rateLimit: RateLimit;
  members: MemberSpec[];
  /** Store and queue per fleet (instances of one publisher share them); embedded by default. */
  backends?: (fleetId: string) => Partial<Pick<Config, 'store' | 'queue'>>;
  /** One embedded store per fleet, shared by its instances (when `backends` gives none). */
  stores?: Record<string, Store>;
  plugins?: string[];
  maxWaitMs?: number;
  /** Collects every log line of every instance. */
  logs?: string[];
  /**
   * CFA keys the upstream accepted before (default KEY_A and KEY_B): each instance starts knowing
   * them proven, so their calls may use the whole budget, which is what these tests measure. A
   * fresh key is unproven and shares the hub's slice for those (issue 27).
   */
  provenKeys?: string[];
}

/** One upstream call as the sandbox received it. */
export interface UpstreamCall {
  at: number;
  fleetId: string;
  instance: string;
  path: string;
  query: Record<string, string>;
  /** The CFA's X-API-KEY, forwarded. */
  cfaKey: string;
  token: string | undefined;
  hubToken: ReceivedRequest['hubToken'];
}

export interface InstanceGroup {
  members: GroupMember[];
  member(name: string): GroupMember;
  /** Every upstream call received so far (token route excluded), oldest first. */
  calls(filter?: (call: UpstreamCall) => boolean): UpstreamCall[];
  close(): Promise<void>;
}

let envCounter = 0;

export async function startInstanceGroup(options: InstanceGroupOptions): Promise<InstanceGroup> {
  const members: GroupMember[] = [];
  const close = async () => {
    for (const member of members.reverse()) await member.service.close();
  };
  try {
    for (const spec of options.members) {
      const created = await options.hub.key(spec.fleetId, spec.name);
      const keyEnv = `E2E_HUB_KEY_${++envCounter}`;
      const service = await startService({
        upstream: options.upstream,
        store: options.backends ? undefined : options.stores?.[spec.fleetId],
        opco: { rateLimit: options.rateLimit },
        env: { [keyEnv]: created.key },
        logs: options.logs,
        config: {
          plugins: options.plugins ?? ['hub'],
          hub: {
            url: options.hubUrls ?? options.hub.url.replace(/^http/, 'ws'),
            apiKeyEnv: keyEnv,
            expectedInstances: spec.expectedInstances ?? 1,
            maxWaitMs: options.maxWaitMs ?? 60_000,
          },
          publisher: { editeur: spec.fleetId, logiciel: spec.name, version: '1.0' },
          ...options.backends?.(spec.fleetId),
        },
      });
      members.push({ ...spec, service, keyId: created.id, hubKey: created.key });
      const standing = new TenantStanding(service.kernel.store, systemClock, DEFAULTS.tenantKeys);
      for (const key of options.provenKeys ?? [KEY_A, KEY_B])
        await standing.accepted('sandbox', authenticate(key).hash);
    }
    await waitConnected(options.hub, members.length);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    members: [...members],
    member(name) {
      const found = members.find((m) => m.name === name);
      if (!found) throw new Error(`no instance ${name}`);
      return found;
    },
    calls(filter = () => true) {
      return options.upstream.received.map(toCall).filter(filter);
    },
    close,
  };
}

/** Resolves once the hub lists `count` connected instances. */
export async function waitConnected(hub: HubProcess, count: number, timeoutMs = 10_000): Promise<void> {
  await eventually(
    async () => {
      const reply = await hub.admin('GET', '/admin/instances').catch(() => undefined);
      return reply?.status === 200 && reply.body.length === count;
    },
    `${count} instances connected to the hub`,
    timeoutMs,
  );
}

function toCall(received: ReceivedRequest): UpstreamCall {
  const header = (name: string) => {
    const value = received.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    at: received.at,
    fleetId: header('editeur') ?? '',
    instance: header('logiciel') ?? '',
    path: received.path,
    query: received.query,
    cfaKey: header('x-api-key') ?? '',
    token: header('svc-hub-token'),
    hubToken: received.hubToken,
  };
}

/**
 * Keeps `concurrency` client GETs in flight on `service` until `stop()` says so; each call asks a
 * fresh page, so nothing is served from a cache. Resolves with every answer's status.
 */
export async function clientLoad(
  service: Service,
  options: { concurrency: number; stop: () => boolean; key?: string },
): Promise<number[]> {
  const statuses: number[] = [];
  let n = 0;
  const loop = async () => {
    while (!options.stop()) {
      n += 1;
      const reply = await service.get(
        `/sandbox/dossiers/etats?numeroPage=${1000 + n}`,
        options.key ? { key: options.key } : {},
      );
      statuses.push(reply.status);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  return statuses;
}
