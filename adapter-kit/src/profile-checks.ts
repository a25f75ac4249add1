/**
 * What can be said of a profile without calling anything. First what the service itself refuses
 * at start (core's profileProblems: a missing required key, a key of the wrong type, a format it
 * does not read), then what it would run but an operator could not live with: its routes are the
 * service's, its limits and cache lifetimes are sane, its error rules can match, it says how the
 * upstream tells a CFA key is unknown (keyRefusal, P13) in a way that can match, and its
 * authentication reads only config keys an operator can write.
 */
import { loadSchema } from '@opco-proxy/schemas';
import { type Profile, type ProfileDefinition } from '@opco-proxy/core';
import { profileProblems, withProfileDefaults } from '@opco-proxy/core/application';
import type { Finding } from './findings.js';

/** A day: longer than that, a cached answer is no longer the upstream's. */
const MAX_CACHE_S = 86_400;
/** SPEC 8: a liste call takes at most 50 numbers, so a sync batch cannot be larger. */
const MAX_BATCH = 50;
/** Polling more often than once a minute spends every tenant's share of the upstream budget. */
const MIN_POLLING_MS = 60_000;
const MAX_POLLING_MS = 86_400_000;
const RULE_CODES = ['NOT_FOUND', 'VALIDATION_ERROR', 'HTTP_ERROR', 'UPSTREAM_ERROR', 'RATE_LIMITED'];

/** The findings of the profile area; a key the service refuses is said once, as the service says it. */
export function checkProfile(definition: ProfileDefinition): Finding[] {
  const refused = profileProblems(definition);
  const findings: Finding[] = refused.map(({ key, problem }) => ({ area: 'profile', where: key, message: problem }));
  if (refused.some((p) => p.key === 'profile' || p.key === 'formatVersion')) return findings;
  const said = (where: string) =>
    refused.some(({ key }) => where === key || where.startsWith(`${key}.`) || where.startsWith(`${key}[`));
  for (const finding of saneValues(withProfileDefaults(definition))) if (!said(finding.where)) findings.push(finding);
  return findings;
}

/** Limits, lifetimes, parts and rules; the types are core's (and were checked before). */
function saneValues(profile: Profile): Finding[] {
  const findings: Finding[] = [];
  const at = (where: string, message: string) => findings.push({ area: 'profile', where, message });
  if (typeof profile.id !== 'string' || !/^[a-z0-9][a-z0-9-]*$/.test(profile.id))
    at('id', 'a lower-case name such as "opco-acme"');
  if (
    !Array.isArray(profile.versions) ||
    profile.versions.length === 0 ||
    profile.versions.some((v) => typeof v !== 'string' || v === '')
  ) {
    at('versions', 'list the upstream API versions the profile calls (GET /{opcoId}/status reports them), e.g. ["v1"]');
  }
  const { limit, windowMs } = profile.rateLimit ?? {};
  if (!Number.isInteger(limit) || limit < 1 || limit > 100_000)
    at(
      'rateLimit.limit',
      `${limit}: a whole number of calls per window, 1 to 100000 (what the upstream allows your credentials)`,
    );
  if (!Number.isInteger(windowMs) || windowMs < 1000 || windowMs > 86_400_000)
    at('rateLimit.windowMs', `${windowMs}: the window in milliseconds, 1000 (a second) to 86400000 (a day)`);
  const batch = profile.sync?.batchSize;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_BATCH)
    at(
      'sync.batchSize',
      `${batch}: dossiers per liste call, 1 to ${MAX_BATCH} (SPEC 8), no more than the upstream's liste takes`,
    );
  const polling = profile.polling?.intervalMs;
  if (!Number.isInteger(polling) || polling < MIN_POLLING_MS || polling > MAX_POLLING_MS) {
    at(
      'polling.intervalMs',
      `${polling}: between ${MIN_POLLING_MS} (a minute) and ${MAX_POLLING_MS} (a day); the first profile polls every 300000`,
    );
  }
  for (const [key, route] of Object.entries(profile.routes ?? {})) {
    if (typeof route !== 'object' || route === null) continue;
    const where = `routes["${key}"]`;
    const post = key.startsWith('POST ');
    if (route.cacheTtlS !== undefined) {
      if (post) at(`${where}.cacheTtlS`, 'a POST is never cached (SPEC 1.1 step 3): remove it');
      else if (!Number.isInteger(route.cacheTtlS) || route.cacheTtlS < 0 || route.cacheTtlS > MAX_CACHE_S)
        at(`${where}.cacheTtlS`, `${route.cacheTtlS}: whole seconds, 0 to ${MAX_CACHE_S}`);
    }
    // SPEC 1.1 step 6: JSON for GET and POST dossier, multipart for the uploads.
    if (key === 'POST /dossiers' || !post) {
      if (route.multipart !== undefined)
        at(`${where}.multipart`, `${key} is sent as JSON (SPEC 1.1 step 6): remove it`);
    } else if (typeof route.multipart !== 'string' || route.multipart === '') {
      at(
        `${where}.multipart`,
        `${key} is sent as multipart/form-data (SPEC 1.1 step 6): name the part that carries the JSON metadata`,
      );
    }
  }
  checkErrorRules(profile, at);
  checkKeyRefusal(profile, at);
  checkAuthKeys(profile, at);
  return findings;
}

function checkErrorRules(profile: Profile, at: (where: string, message: string) => void): void {
  // Only what core let through is read here: a rule of the wrong type was said already.
  (Array.isArray(profile.errors) ? profile.errors : []).forEach((rule, index) => {
    if (typeof rule !== 'object' || rule === null) return;
    const where = `errors[${index}]`;
    if (!Number.isInteger(rule.status) || rule.status < 400 || rule.status > 599)
      at(`${where}.status`, `${rule.status}: the upstream's error status, 400 to 599`);
    if (!RULE_CODES.includes(rule.code)) at(`${where}.code`, `${rule.code}: one of ${RULE_CODES.join(', ')} (SPEC 7)`);
    for (const route of Array.isArray(rule.routes) ? rule.routes : []) {
      if (!profile.routes?.[route])
        at(`${where}.routes`, `"${route}" is not a route of this profile, so the rule can never apply`);
    }
  });
}

/** The regular expression as the upstream client would test it once: without the flags that keep state. */
export function statelessTest(body: RegExp, text: string): boolean {
  return new RegExp(body.source, body.flags.replace(/[gy]/g, '')).test(text);
}

/**
 * keyRefusal (issue 37, P13): declared, tested the same on every answer, not matching every answer,
 * and not shadowed by an error rule the upstream client tries first (core/src/pipeline/upstream-client.ts).
 */
function checkKeyRefusal(profile: Profile, at: (where: string, message: string) => void): void {
  const refusal = profile.keyRefusal;
  if (refusal === undefined) {
    at(
      'keyRefusal',
      'declare how the upstream says a CFA key is unknown, e.g. keyRefusal: {status: 403, body: /clé API refusée/}: without it, a key the upstream ' +
        'accepted is held refused only after 3 refused requests in a row, and each costs the CFA a refused request (P13)',
    );
    return;
  }
  // Of the wrong type: core said it (profileProblems), under keyRefusal or keyRefusal.body.
  if (typeof refusal !== 'object' || refusal === null || !(refusal.body instanceof RegExp)) return;
  const status = refusal.status ?? 403;
  const shown = String(refusal.body);
  if (/[gy]/.test(refusal.body.flags)) {
    at(
      'keyRefusal.body',
      `${shown}: the g and y flags make test() start where the last match ended (lastIndex), so the same refusal would be recognised on one answer and missed on the next: remove them`,
    );
  } else if (statelessTest(refusal.body, '')) {
    at(
      'keyRefusal.body',
      `${shown} matches an empty answer, so every ${status} would be taken for an unknown key and hold the CFA's key refused: match the upstream's words for an unknown key, e.g. /clé API refusée/`,
    );
  }
  (Array.isArray(profile.errors) ? profile.errors : []).forEach((rule, index) => {
    if (typeof rule !== 'object' || rule === null || rule.status !== status || rule.body !== undefined) return;
    const routes = Array.isArray(rule.routes) ? rule.routes.join(', ') : 'every route';
    at(
      `errors[${index}]`,
      `takes every ${status} answer of ${routes} before keyRefusal is tried (the error rules come first), so no key refusal is recognised there: give the rule a body`,
    );
  });
}

/** An auth strategy that reads a key the config file refuses could never be configured. */
function checkAuthKeys(profile: Profile, at: (where: string, message: string) => void): void {
  const auth = profile.auth;
  if (!Array.isArray(auth?.configKeys)) return;
  const config = loadSchema('kernel-config') as {
    properties: { opcos: { additionalProperties: { properties: Record<string, unknown> } } };
  };
  const accepted = Object.keys(config.properties.opcos.additionalProperties.properties);
  for (const key of auth.configKeys as readonly string[]) {
    if (!accepted.includes(key))
      at(
        'auth',
        `the ${auth.kind} strategy reads opcos.<id>.${key}, which the config file does not accept (${accepted.join(', ')}); read custom settings from opcos.<id>.auth`,
      );
  }
}
