/**
 * What a profile must be for the service to run it, checked once when it is loaded (the kernel,
 * opco-directory.ts) and by the adapter kit's profile area: one check, so an adapter the kit
 * passes is one the service starts, and a block of the wrong type is refused at start naming its
 * key instead of failing later as a TypeError. The blocks a profile may leave out get their
 * defaults here, in one place (docs/adapters.md lists them).
 *
 * The profile format has a version: an adapter says which one it is written for
 * (`formatVersion`, absent means 1); a service refuses a format it does not support rather than
 * misread it. A change that makes an existing profile mean something else, or that a service of
 * this format could not read, is a new format.
 */
import { ROUTE_KEYS, type Profile, type ProfileDefinition } from './profile.js';

/** The profile format this core writes and reads. */
export const PROFILE_FORMAT_VERSION = 1;
/** The formats this core can run. */
export const SUPPORTED_PROFILE_FORMATS: readonly number[] = [PROFILE_FORMAT_VERSION];

/**
 * The values of the keys a profile may leave out. Five minutes between polls and 50 numbers per
 * liste call (SPEC 8's largest) are what the common API takes; the operator overrides the
 * polling interval per opco (`pollingIntervalMs`). `auth` absent is OAuth client credentials
 * (form), `errors` absent leaves the status to decide (SPEC 7).
 */
export const PROFILE_DEFAULTS = {
  formatVersion: PROFILE_FORMAT_VERSION,
  sync: { batchSize: 50 },
  polling: { intervalMs: 300_000 },
} as const;

/** A key of the profile (`polling.intervalMs`, `routes["GET /dossiers"].upstream`) and what is wrong with it. */
export interface ProfileProblem {
  key: string;
  problem: string;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown) => Number.isInteger(value) && (value as number) >= 1;
const shown = (value: unknown) =>
  typeof value === 'function'
    ? 'a function'
    : Array.isArray(value)
      ? 'an array'
      : (JSON.stringify(value) ?? String(value));

/** The profile's format, or the problem with it: the caller refuses an unsupported one before reading further. */
export function profileFormat(profile: { formatVersion?: unknown }): number | ProfileProblem {
  const version = profile.formatVersion ?? PROFILE_FORMAT_VERSION;
  if (!Number.isInteger(version))
    return {
      key: 'formatVersion',
      problem: `${shown(version)}: a whole number, the profile format the adapter is written for`,
    };
  if (!SUPPORTED_PROFILE_FORMATS.includes(version as number)) {
    return {
      key: 'formatVersion',
      problem: `profile format ${version as number} is not supported: this service supports profile format ${SUPPORTED_PROFILE_FORMATS.join(', ')}`,
    };
  }
  return version as number;
}

/** What stops the service from running `value` as a profile: a missing required key or a key of the wrong type. */
export function profileProblems(value: unknown): ProfileProblem[] {
  if (!isObject(value)) return [{ key: 'profile', problem: `${shown(value)}: the adapter's profile, an object` }];
  const problems: ProfileProblem[] = [];
  const at = (key: string, problem: string) => problems.push({ key, problem });
  const format = profileFormat(value);
  if (typeof format !== 'number') return [format];
  if (typeof value.id !== 'string' || value.id === '')
    at('id', `${shown(value.id)}: required, the profile's name, a string such as "opco-acme"`);
  if (!Array.isArray(value.versions) || value.versions.some((v) => typeof v !== 'string'))
    at('versions', `${shown(value.versions)}: required, the upstream API versions, a list of strings such as ["v1"]`);
  if (!isObject(value.rateLimit))
    at('rateLimit', `${shown(value.rateLimit)}: required, {limit, windowMs}: the calls the upstream allows per window`);
  else {
    if (!isCount(value.rateLimit.limit))
      at('rateLimit.limit', `${shown(value.rateLimit.limit)}: a whole number of calls, 1 or more`);
    if (!isCount(value.rateLimit.windowMs))
      at('rateLimit.windowMs', `${shown(value.rateLimit.windowMs)}: the window in milliseconds, a whole number`);
  }
  optionalBlock(value.sync, 'sync', 'batchSize', 'dossiers per liste call', at);
  optionalBlock(value.polling, 'polling', 'intervalMs', 'milliseconds between polls', at);
  checkAuth(value.auth, at);
  checkErrorRules(value.errors, at);
  checkKeyRefusal(value.keyRefusal, at);
  checkRoutes(value.routes, at);
  return problems;
}

/** The profile the service runs: the definition with the defaults of the keys it leaves out (call it once problems are none). */
export function withProfileDefaults(definition: ProfileDefinition): Profile {
  return {
    ...definition,
    formatVersion: definition.formatVersion ?? PROFILE_DEFAULTS.formatVersion,
    sync: { ...PROFILE_DEFAULTS.sync, ...definition.sync },
    polling: { ...PROFILE_DEFAULTS.polling, ...definition.polling },
  };
}

type At = (key: string, problem: string) => void;

/** `sync` and `polling`: absent, or an object whose one field is absent or a count. */
function optionalBlock(block: unknown, key: 'sync' | 'polling', field: string, what: string, at: At): void {
  if (block === undefined) return;
  const fallback = (PROFILE_DEFAULTS[key] as Record<string, number>)[field];
  if (!isObject(block))
    at(key, `${shown(block)}: an object {${field}}, or leave it out for the default (${field} ${fallback})`);
  else if (block[field] !== undefined && !isCount(block[field]))
    at(`${key}.${field}`, `${shown(block[field])}: ${what}, a whole number, 1 or more`);
}

function checkAuth(auth: unknown, at: At): void {
  if (auth === undefined) return;
  if (
    !isObject(auth) ||
    typeof auth.kind !== 'string' ||
    auth.kind === '' ||
    typeof auth.setup !== 'function' ||
    !Array.isArray(auth.configKeys)
  ) {
    at(
      'auth',
      'an authentication strategy of @opco-proxy/core (oauthClientCredentials, apiKeyHeader) or {kind, configKeys, setup}',
    );
  }
}

function checkErrorRules(errors: unknown, at: At): void {
  if (errors === undefined) return;
  if (!Array.isArray(errors)) {
    at('errors', `${shown(errors)}: a list of rules {status, code, body?, routes?, description?}, or leave it out`);
    return;
  }
  errors.forEach((rule: unknown, index) => {
    const where = `errors[${index}]`;
    if (!isObject(rule)) return at(where, `${shown(rule)}: a rule {status, code, body?, routes?, description?}`);
    if (!Number.isInteger(rule.status))
      at(`${where}.status`, `${shown(rule.status)}: the upstream's error status, a whole number`);
    if (typeof rule.code !== 'string') at(`${where}.code`, `${shown(rule.code)}: a code of the error table (SPEC 7)`);
    if (rule.body !== undefined && !(rule.body instanceof RegExp))
      at(`${where}.body`, "a regular expression tested against the upstream answer's text");
    if (rule.routes !== undefined && (!Array.isArray(rule.routes) || rule.routes.some((r) => typeof r !== 'string')))
      at(`${where}.routes`, `${shown(rule.routes)}: a list of route keys`);
    if (rule.description !== undefined && typeof rule.description !== 'string')
      at(`${where}.description`, `${shown(rule.description)}: a string`);
  });
}

function checkKeyRefusal(refusal: unknown, at: At): void {
  if (refusal === undefined) return;
  if (!isObject(refusal))
    return at(
      'keyRefusal',
      `${shown(refusal)}: {status?, body}: how the upstream says a CFA's X-API-KEY is unknown, or leave it out`,
    );
  if (
    refusal.status !== undefined &&
    !(
      Number.isInteger(refusal.status) &&
      (refusal.status as number) >= 400 &&
      (refusal.status as number) < 500 &&
      refusal.status !== 401
    )
  ) {
    at(
      'keyRefusal.status',
      `${shown(refusal.status)}: the 4xx status (401 excepted: it speaks of the service's own credentials) of the upstream's answer, default 403`,
    );
  }
  if (!(refusal.body instanceof RegExp))
    at('keyRefusal.body', "required, a regular expression tested against the upstream answer's text");
}

function checkRoutes(routes: unknown, at: At): void {
  if (!isObject(routes)) {
    at(
      'routes',
      `${shown(routes)}: required, an object of route key to {upstream, ...}, e.g. {"GET /dossiers": {"upstream": "/v1/dossiers"}}`,
    );
    return;
  }
  for (const [key, route] of Object.entries(routes)) {
    const where = `routes["${key}"]`;
    if (!(ROUTE_KEYS as readonly string[]).includes(key)) {
      at(where, `not a route of the service; the routes are ${ROUTE_KEYS.join(', ')}`);
      continue;
    }
    if (route === undefined) continue;
    if (!isObject(route)) {
      at(where, `${shown(route)}: an object {upstream, cacheTtlS?, request?, response?, multipart?}`);
      continue;
    }
    if (typeof route.upstream !== 'string' || !route.upstream.startsWith('/'))
      at(`${where}.upstream`, 'the upstream path, starting with "/", appended to the opco\'s baseUrl');
    if (route.cacheTtlS !== undefined && (!Number.isInteger(route.cacheTtlS) || (route.cacheTtlS as number) < 0))
      at(`${where}.cacheTtlS`, `${shown(route.cacheTtlS)}: whole seconds, 0 or more`);
    if (route.multipart !== undefined && typeof route.multipart !== 'string')
      at(`${where}.multipart`, `${shown(route.multipart)}: the name of the part that carries the JSON metadata`);
    for (const list of ['request', 'response'] as const) {
      const transforms = route[list];
      if (transforms === undefined) continue;
      if (!Array.isArray(transforms)) {
        at(`${where}.${list}`, `${shown(transforms)}: a list of transforms`);
        continue;
      }
      transforms.forEach((transform: unknown, index) => {
        if (!isObject(transform) || typeof transform.name !== 'string' || typeof transform.apply !== 'function') {
          at(`${where}.${list}[${index}]`, 'a transform of the vocabulary of @opco-proxy/core, or {name, apply}');
        }
      });
    }
  }
}
