/**
 * The JSON protocol between an instance and the hub, over one WebSocket (`GET /ws?apiKey=KEY`).
 * Every message is one JSON object with a `type`, checked against its JSON Schema
 * (schemas/json/hub-<type>.schema.json, which the types below are generated from). Both sides
 * drop what does not fit: a hostile or broken peer must not crash either side, and nothing
 * unchecked reaches the scheduler.
 *
 * Instance -> hub: hello (first, once), ask, cancel, done, metrics.
 * Hub -> instance: welcome (answer to hello), grant, refused (an ask the hub will not serve), error.
 *
 * Versions: 2 renamed the welcome's `tenantId` to `fleetId` (the instances sharing one budget);
 * nothing else changed. An instance asks for 2 in its socket URL (`&protocol=2`), which a hub of
 * version 1 ignores, and still says 1 in its hello, the only value such a hub takes; a hub answers
 * the welcome in the version asked for, so instances of either version read it.
 */
import {
  validate,
  type HubAsk,
  type HubCancel,
  type HubDone,
  type HubError,
  type HubGrant,
  type HubHello,
  type HubMetrics,
  type HubMetricsReport,
  type HubRateLimit,
  type HubRefused,
  type HubUsageEntry,
  type HubWelcome,
} from '@opco-proxy/schemas';

export const PROTOCOL_VERSION = 2;
/** The hello has not changed since version 1 (see above). */
export const HELLO_PROTOCOL = 1;
/** The query parameter of the socket URL in which an instance asks for a protocol version. */
export const PROTOCOL_PARAM = 'protocol';

/** SPEC 5.8: a grant's JWT lives 30 seconds; the upstream call limit is 30 seconds too (SPEC 8). */
export const GRANT_TTL_S = 30;

/** Largest message either side accepts (a hello carries the calls of the last window). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Bounds of a hello's usage report; an instance with more reports `complete: false`. */
export const MAX_USAGE_ENTRIES = 100_000; // hub-hello.schema.json: usage.maxItems

export type HttpMethod = HubAsk['method'];
export type RateLimit = HubRateLimit;
export type UsageEntry = HubUsageEntry;
export type MetricsReport = HubMetricsReport;

export type HelloMessage = HubHello;
export type AskMessage = HubAsk;
export type CancelMessage = HubCancel;
export type DoneMessage = HubDone;
export type MetricsMessage = HubMetrics;
export type InstanceMessage = HelloMessage | AskMessage | CancelMessage | DoneMessage | MetricsMessage;

export type WelcomeMessage = HubWelcome;
export type GrantMessage = HubGrant;
export type RefusedMessage = HubRefused;
export type ErrorMessage = HubError;
export type HubMessage = WelcomeMessage | GrantMessage | RefusedMessage | ErrorMessage;

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

const MAX_SHOWN_PROBLEMS = 5;
const MAX_ERROR_CHARACTERS = 1000; // hub-error.schema.json: message.maxLength

const INSTANCE_TYPES: ReadonlySet<string> = new Set<InstanceMessage['type']>([
  'hello',
  'ask',
  'cancel',
  'done',
  'metrics',
]);
const HUB_TYPES: ReadonlySet<string> = new Set<HubMessage['type']>(['welcome', 'grant', 'refused', 'error']);

/** JSON text to a message of one of `types`, or the reason it is not one: `hello: protocol: ...`. */
function parseWith<T>(data: unknown, types: ReadonlySet<string>): Parsed<T> {
  let value: unknown;
  try {
    value = JSON.parse(typeof data === 'string' ? data : Buffer.isBuffer(data) ? data.toString('utf8') : String(data));
  } catch {
    return { ok: false, error: 'message is not JSON' };
  }
  const type =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as { type?: unknown }).type
      : undefined;
  if (typeof type !== 'string' || !types.has(type)) return { ok: false, error: 'message has no known type' };
  const result = validate(`hub-${type}`, value);
  if (result.valid) return { ok: true, message: value as T };
  // Bounded: the text goes back in an `error` message (1000 characters at most) and to the logs.
  const more = result.errors.length - MAX_SHOWN_PROBLEMS;
  const problems = result.errors.slice(0, MAX_SHOWN_PROBLEMS).join('; ') + (more > 0 ? `; and ${more} more` : '');
  return { ok: false, error: `${type}: ${problems}`.slice(0, MAX_ERROR_CHARACTERS) };
}

/**
 * Compiles every message's schema now (some 0.5 s at first use): called before a connection
 * opens, so the first ask and grant of a process do not wait for it (a client GET waits only
 * `maxWaitMs` for its grant).
 */
export function prepareProtocol(): void {
  for (const type of [...INSTANCE_TYPES, ...HUB_TYPES]) validate(`hub-${type}`, {});
}

/** What the hub accepts from an instance. */
export function parseInstanceMessage(data: unknown): Parsed<InstanceMessage> {
  return parseWith<InstanceMessage>(data, INSTANCE_TYPES);
}

/** What an instance accepts from the hub. */
export function parseHubMessage(data: unknown): Parsed<HubMessage> {
  return parseWith<HubMessage>(data, HUB_TYPES);
}

/** Raw `ws` message data (Buffer, Buffer[] or ArrayBuffer) as one Buffer. */
export function messageBytes(data: Buffer | ArrayBuffer | Buffer[]): Buffer {
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.isBuffer(data) ? data : Buffer.from(data);
}
