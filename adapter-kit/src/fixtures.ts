/**
 * The integrator's recorded upstream answers: a `fixtures/` folder with one sub-folder per
 * profile route (`get-dossiers-etats`, `post-factures`), each holding the upstream's answers as
 * captured, one JSON file each, and optionally `upstream-request.schema.json`, what the upstream
 * accepts for that route. `auth/token.json` is the token endpoint's answer.
 *
 * A fixture file:
 *
 *     { "description": "unknown dossier",          (optional: what was asked)
 *       "status": 400,                            (the upstream's HTTP status)
 *       "headers": { "retry-after": "7" },        (optional)
 *       "body": { "erreur": "Dossier inconnu" },  (the JSON answer; or "text": "<not JSON>")
 *       "expect": { "status": 404, "code": "NOT_FOUND" } }  (error answers: what the service must answer)
 *
 * An answer the service answers 403 `HTTP_ERROR` (`expect: {"status": 403, "code": "HTTP_ERROR"}`)
 * is the upstream saying the CFA's key is unknown: the profile's `keyRefusal` must recognise it
 * (issue 37, P13). A 403 that refuses one request to a key the upstream knows (a dossier that is
 * not the CFA's) says so: `"expect": {"status": 403, "code": "HTTP_ERROR", "keyRefused": false}`,
 * and `keyRefusal` must not recognise it. A 401 is never a key refusal: it speaks of the service's
 * own credentials (D10).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTE_KEYS, type RouteKey } from '@opco-proxy/core';
import type { Finding } from './findings.js';

export interface Fixture {
  /** Where it is, relative to the package (`fixtures/get-dossiers/unknown.json`), for messages. */
  file: string;
  description?: string;
  status: number;
  headers: Record<string, string>;
  /** The answer's text, exactly as it is served again. */
  text: string;
  expect?: { status: number; code: string; keyRefused?: boolean };
}

/** Whether the fixture is the upstream saying the CFA's key is unknown (see the layout above). */
export function describesKeyRefusal(fixture: Fixture): boolean {
  const expect = fixture.expect;
  if (!expect || fixture.status === 401) return false;
  return expect.keyRefused ?? (expect.code === 'HTTP_ERROR' && expect.status === 403);
}

export interface RouteFixtures {
  route: RouteKey;
  dir: string;
  answers: Fixture[];
  /** The upstream request schema the integrator declares, and where it is. */
  requestSchema?: { file: string; schema: Record<string, unknown> };
}

export interface FixtureSet {
  root: string;
  routes: Map<RouteKey, RouteFixtures>;
  token?: Fixture;
}

export const REQUEST_SCHEMA_FILE = 'upstream-request.schema.json';
export const TOKEN_FIXTURE = join('auth', 'token.json');

/** `GET /dossiers/etats` -> `get-dossiers-etats`. */
export function routeDir(route: RouteKey): string {
  return route
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const ROUTE_BY_DIR = new Map(ROUTE_KEYS.map((route) => [routeDir(route), route]));

/** Reads every fixture; a folder or file the kit cannot use is a finding, not an exception. */
export function readFixtures(fixturesDir: string | URL, findings: Finding[]): FixtureSet {
  const root = typeof fixturesDir === 'string' ? fixturesDir : fileURLToPath(fixturesDir);
  const set: FixtureSet = { root, routes: new Map() };
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    findings.push({
      area: 'fixtures',
      where: root,
      message:
        "no fixtures folder: record the upstream's answers in fixtures/<route>/<name>.json (see docs/adapters.md)",
    });
    return set;
  }
  const shown = (path: string) => join('fixtures', relative(root, path));
  for (const name of readdirSync(root).sort()) {
    const dir = join(root, name);
    if (!statSync(dir).isDirectory()) continue;
    if (name === 'auth') {
      if (existsSync(join(root, TOKEN_FIXTURE)))
        set.token = readFixture(join(root, TOKEN_FIXTURE), shown(join(root, TOKEN_FIXTURE)), findings);
      continue;
    }
    const route = ROUTE_BY_DIR.get(name);
    if (!route) {
      findings.push({
        area: 'fixtures',
        where: shown(dir),
        message: `"${name}" names no route; folders are named after routes: ${[...ROUTE_BY_DIR.keys()].join(', ')}`,
      });
      continue;
    }
    const entry: RouteFixtures = { route, dir: shown(dir), answers: [] };
    for (const file of readdirSync(dir).sort()) {
      const path = join(dir, file);
      if (file === REQUEST_SCHEMA_FILE) {
        const schema = readJson(path, shown(path), findings);
        if (schema && typeof schema === 'object' && !Array.isArray(schema))
          entry.requestSchema = { file: shown(path), schema: schema as Record<string, unknown> };
        continue;
      }
      if (!file.endsWith('.json')) continue;
      const fixture = readFixture(path, shown(path), findings);
      if (fixture) entry.answers.push(fixture);
    }
    set.routes.set(route, entry);
  }
  return set;
}

function readJson(path: string, shown: string, findings: Finding[]): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (err) {
    findings.push({ area: 'fixtures', where: shown, message: `not JSON: ${(err as Error).message}` });
    return undefined;
  }
}

function readFixture(path: string, shown: string, findings: Finding[]): Fixture | undefined {
  const raw = readJson(path, shown, findings) as Record<string, unknown> | undefined;
  if (raw === undefined) return undefined;
  const bad = (message: string) => {
    findings.push({ area: 'fixtures', where: shown, message });
    return undefined;
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return bad('a fixture is an object {status, body, ...}');
  const status = raw.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599)
    return bad('"status" must be the HTTP status the upstream answered (100-599)');
  if (!('body' in raw) && typeof raw.text !== 'string')
    return bad('give the answer as "body" (JSON) or "text" (anything else)');
  const headers = raw.headers ?? {};
  if (typeof headers !== 'object' || headers === null || Object.values(headers).some((v) => typeof v !== 'string'))
    return bad('"headers" maps header names to strings');
  const expect = raw.expect as Fixture['expect'] | undefined;
  if (expect !== undefined && (typeof expect?.status !== 'number' || typeof expect?.code !== 'string'))
    return bad('"expect" is {status, code}: what the service answers its client (SPEC 7)');
  if (expect?.keyRefused !== undefined) {
    if (typeof expect.keyRefused !== 'boolean')
      return bad('"expect.keyRefused" is true or false: whether the answer says the CFA\'s key is unknown');
    if (expect.keyRefused && (expect.code !== 'HTTP_ERROR' || expect.status !== 403 || status === 401)) {
      return bad(
        'an unknown CFA key is answered 403 HTTP_ERROR (D8), and never told by a 401 (the service\'s own credentials, D10): fix "expect" or remove "keyRefused"',
      );
    }
  }
  if (status >= 400 && !expect)
    return bad(
      `an error answer needs "expect": {status, code}, what the service must answer its client for it (SPEC 7), e.g. {"status": ${status === 404 ? 404 : status}, "code": "${status === 404 ? 'NOT_FOUND' : 'UPSTREAM_ERROR'}"}`,
    );
  return {
    file: shown,
    description: typeof raw.description === 'string' ? raw.description : undefined,
    status,
    headers: headers as Record<string, string>,
    text: 'body' in raw ? JSON.stringify(raw.body) : (raw.text as string),
    expect,
  };
}
