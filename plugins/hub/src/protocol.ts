/**
 * The JSON protocol between an instance and the hub, over one WebSocket (`GET /ws?apiKey=KEY`).
 * Every message is one JSON object with a `type`. Both sides validate what they receive with the
 * parsers below and drop what does not fit: a hostile or broken peer must not crash either side,
 * and nothing unchecked reaches the scheduler.
 *
 * Instance -> hub: hello (first, once), ask, cancel, done, metrics.
 * Hub -> instance: welcome (answer to hello), grant, refused (an ask the hub will not serve), error.
 */

export const PROTOCOL_VERSION = 1;

/** SPEC 5.8: a grant's JWT lives 30 seconds; the upstream call limit is 30 seconds too (SPEC 8). */
export const GRANT_TTL_S = 30;

/** Largest message either side accepts (a hello carries the calls of the last window). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Bounds of a hello's usage report; an instance with more reports `complete: false`. */
export const MAX_USAGE_ENTRIES = 100_000;

export type HttpMethod = 'GET' | 'POST';

export interface RateLimit {
  limit: number;
  windowMs: number;
}

/** One upstream call the instance made recently, or is making; times are ages, so clocks may differ. */
export interface UsageEntry {
  /** The grant id (JWT `jti`) for a call made with a grant; `local-…` for a call of the local bucket. */
  id: string;
  opcoId: string;
  startedAgoMs: number;
  /** Absent while the call is still in flight. */
  endedAgoMs?: number;
}

/** Spec 1.1 step 9: one opcoId's 60-second window as the instance measured it. */
export interface MetricsReport {
  requests: number;
  errors: number;
  /** Upstream 429 answers. */
  rateLimited: number;
  averageLatencyMs: number;
}

export interface HelloMessage {
  type: 'hello';
  protocol: number;
  instanceId: string;
  expectedInstances: number;
  /** The rate limits the instance knows per opcoId (used for opcoIds the hub's config does not list). */
  limits: Record<string, RateLimit>;
  usage: UsageEntry[];
  /** False when the instance had to leave entries out; the hub then frees nothing it cannot see. */
  complete: boolean;
}

export interface AskMessage {
  type: 'ask';
  /** Chosen by the instance, unique among its waiting asks. */
  askId: string;
  opcoId: string;
  method: HttpMethod;
  route: string;
  /** SPEC 8: 1 client, 5 default, 10 sync and polling. */
  priority: number;
  /** Hash of the CFA's X-API-KEY: CFA tenants of one priority take turns. */
  tenant: string;
  rateLimit: RateLimit;
  /**
   * False when the upstream has not accepted the CFA's key lately (issue 27): the hub serves the
   * ask from the unproven slice of the budget. Absent means proven, so an instance of the previous
   * version, which never sends it, keeps working; and instances send it only when false, so a
   * proven ask is also one that a hub of the previous version (which refuses unknown fields) takes.
   */
  proven?: boolean;
}

export interface CancelMessage {
  type: 'cancel';
  askId: string;
}

export interface DoneMessage {
  type: 'done';
  grantId: string;
  /** `unused`: the grant came after its ask was given up; the hub frees its slot at once. */
  outcome: 'used' | 'unused';
  status?: number;
  latencyMs?: number;
}

export interface MetricsMessage {
  type: 'metrics';
  windows: Record<string, MetricsReport>;
}

export type InstanceMessage = HelloMessage | AskMessage | CancelMessage | DoneMessage | MetricsMessage;

export interface WelcomeMessage {
  type: 'welcome';
  protocol: number;
  instanceId: string;
  tenantId: string;
  /** The hub pings this often; an instance that hears nothing for three periods reconnects. */
  heartbeatMs: number;
}

export interface GrantMessage {
  type: 'grant';
  askId: string;
  grantId: string;
  /** The HS256 JWT sent upstream as `Svc-Hub-Token`. */
  token: string;
  expiresInMs: number;
}

export interface RefusedMessage {
  type: 'refused';
  askId: string;
  message: string;
}

export interface ErrorMessage {
  type: 'error';
  message: string;
}

export type HubMessage = WelcomeMessage | GrantMessage | RefusedMessage | ErrorMessage;

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

// ---- field checks: each returns an error text, or undefined when the value fits ----

type Check = (value: unknown) => string | undefined;

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const OPCO_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Names that would reach an object's prototype when used as a key. */
export const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'];

const id: Check = (v) => (typeof v === 'string' && ID.test(v) ? undefined : 'must be 1-128 letters, digits or _.:-');
const opcoId: Check = (v) =>
  typeof v === 'string' && OPCO_ID.test(v) && !FORBIDDEN_KEYS.includes(v) ? undefined : 'must be 1-64 letters, digits, _ or -';
const text = (max: number): Check => (v) => (typeof v === 'string' && v.length > 0 && v.length <= max ? undefined : `must be a string of 1-${max} characters`);
const int = (min: number, max: number): Check => (v) =>
  Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? undefined : `must be an integer from ${min} to ${max}`;
const num = (min: number, max: number): Check => (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max ? undefined : `must be a number from ${min} to ${max}`;
const oneOf = (...values: unknown[]): Check => (v) => (values.includes(v) ? undefined : `must be one of ${values.join(', ')}`);
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'must be a boolean');
const DAY_MS = 86_400_000;

const rateLimit: Check = (v) => checkObject(v, { limit: int(1, 1_000_000), windowMs: int(1, DAY_MS) });
const metricsReport: Check = (v) =>
  checkObject(v, { requests: int(0, 1e9), errors: int(0, 1e9), rateLimited: int(0, 1e9), averageLatencyMs: num(0, 1e7) });
const usageEntry: Check = (v) =>
  checkObject(v, { id, opcoId, startedAgoMs: int(0, DAY_MS), endedAgoMs: int(0, DAY_MS) }, ['endedAgoMs']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every listed field checked, no other field allowed (a typo must not pass silently). */
function checkObject(value: unknown, fields: Record<string, Check>, optional: string[] = []): string | undefined {
  if (!isRecord(value)) return 'must be an object';
  for (const key of Object.keys(value)) if (!Object.hasOwn(fields, key)) return `${key}: is not allowed`;
  for (const [key, check] of Object.entries(fields)) {
    if (value[key] === undefined) {
      if (optional.includes(key)) continue;
      return `${key}: is required`;
    }
    const problem = check(value[key]);
    if (problem) return `${key}: ${problem}`;
  }
  return undefined;
}

const mapOf = (keyCheck: Check, valueCheck: Check, max: number): Check => (v) => {
  if (!isRecord(v)) return 'must be an object';
  const entries = Object.entries(v);
  if (entries.length > max) return `must have at most ${max} entries`;
  for (const [key, value] of entries) {
    const problem = keyCheck(key) ?? valueCheck(value);
    if (problem) return `${key}: ${problem}`;
  }
  return undefined;
};

const listOf = (itemCheck: Check, max: number): Check => (v) => {
  if (!Array.isArray(v)) return 'must be an array';
  if (v.length > max) return `must have at most ${max} items`;
  for (const [index, item] of v.entries()) {
    const problem = itemCheck(item);
    if (problem) return `[${index}]: ${problem}`;
  }
  return undefined;
};

const TYPE = { type: () => undefined } as Record<string, Check>;

const INSTANCE_MESSAGES: Record<InstanceMessage['type'], { fields: Record<string, Check>; optional?: string[] }> = {
  hello: {
    fields: {
      ...TYPE,
      protocol: oneOf(PROTOCOL_VERSION),
      instanceId: id,
      expectedInstances: int(1, 10_000),
      limits: mapOf(opcoId, rateLimit, 1000),
      usage: listOf(usageEntry, MAX_USAGE_ENTRIES),
      complete: bool,
    },
  },
  ask: {
    fields: {
      ...TYPE,
      askId: id,
      opcoId,
      method: oneOf('GET', 'POST'),
      route: text(200),
      priority: int(0, 100),
      tenant: text(128),
      rateLimit,
      proven: bool,
    },
    optional: ['proven'],
  },
  cancel: { fields: { ...TYPE, askId: id } },
  done: {
    fields: { ...TYPE, grantId: id, outcome: oneOf('used', 'unused'), status: int(0, 999), latencyMs: num(0, 1e7) },
    optional: ['status', 'latencyMs'],
  },
  metrics: { fields: { ...TYPE, windows: mapOf(opcoId, metricsReport, 1000) } },
};

const HUB_MESSAGES: Record<HubMessage['type'], { fields: Record<string, Check>; optional?: string[] }> = {
  welcome: { fields: { ...TYPE, protocol: oneOf(PROTOCOL_VERSION), instanceId: id, tenantId: text(128), heartbeatMs: int(100, 3_600_000) } },
  grant: { fields: { ...TYPE, askId: id, grantId: id, token: text(4096), expiresInMs: int(-DAY_MS, DAY_MS) } },
  refused: { fields: { ...TYPE, askId: id, message: text(1000) } },
  error: { fields: { ...TYPE, message: text(1000) } },
};

function parseWith<T>(data: unknown, table: Record<string, { fields: Record<string, Check>; optional?: string[] }>): Parsed<T> {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
  } catch {
    return { ok: false, error: 'message is not JSON' };
  }
  if (!isRecord(value) || typeof value.type !== 'string' || !Object.hasOwn(table, value.type)) {
    return { ok: false, error: 'message has no known type' };
  }
  const shape = table[value.type];
  const problem = checkObject(value, shape.fields, shape.optional);
  return problem ? { ok: false, error: `${value.type}: ${problem}` } : { ok: true, message: value as T };
}

/** What the hub accepts from an instance. */
export function parseInstanceMessage(data: unknown): Parsed<InstanceMessage> {
  return parseWith<InstanceMessage>(data, INSTANCE_MESSAGES);
}

/** What an instance accepts from the hub. */
export function parseHubMessage(data: unknown): Parsed<HubMessage> {
  return parseWith<HubMessage>(data, HUB_MESSAGES);
}

/** Raw `ws` message data (Buffer, Buffer[] or ArrayBuffer) as one Buffer. */
export function messageBytes(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}
