/**
 * The conformance suite of an adapter package, in one call from its own tests:
 *
 *     import t from 'tap';
 *     import { conformance } from '@opco-proxy/adapter-kit';
 *     import { profile } from '../src/index.js';
 *     await conformance(t, { profile, fixturesDir: new URL('../../fixtures/', import.meta.url) });
 *
 * `checkAdapter` does the work and returns what it found, so a test can also assert that a
 * broken adapter is caught, and how it is told.
 */
import { type Profile, type ProfileDefinition, type RouteKey } from '@opco-proxy/core';
import { profileProblems, withProfileDefaults } from '@opco-proxy/core/application';
import { checkAnswer, checkError, checkKeyRefusal } from './answer-checks.js';
import { describeFinding, type Finding } from './findings.js';
import {
  describesKeyRefusal,
  readFixtures,
  REQUEST_SCHEMA_FILE,
  routeDir,
  TOKEN_FIXTURE,
  type Fixture,
  type FixtureSet,
} from './fixtures.js';
import { checkProfile } from './profile-checks.js';
import { startReplay, type AuthInput, type Replay } from './replay.js';
import { checkSentRequest, compileRequestSchema } from './request-checks.js';
import { SAMPLE_REQUESTS, type SampleRequest } from './request-corpus.js';
import { checkTransformPaths } from './transform-paths.js';

export interface ConformanceOptions {
  /** The adapter's profile as it exports it (the keys with a default may be left out). */
  profile: ProfileDefinition;
  /** The folder of recorded answers (fixtures.ts says its layout). */
  fixturesDir: string | URL;
  /** More service requests to send through the profile, beside the kit's own samples. */
  requests?: Partial<Record<RouteKey, SampleRequest[]>>;
  /** Config keys and environment for a custom authentication strategy. */
  auth?: AuthInput;
}

export const AREAS = ['profile', 'fixtures', 'auth', 'transforms', 'answers', 'errors', 'requests'] as const;

export interface ConformanceReport {
  findings: Finding[];
  /** What each area looked at, for the test output. */
  checked: Record<(typeof AREAS)[number], string>;
}

export async function checkAdapter(options: ConformanceOptions): Promise<ConformanceReport> {
  const findings = checkProfile(options.profile);
  const fixtures = readFixtures(options.fixturesDir, findings);
  // A profile the service would refuse at start is not run either: what the profile area says is the whole story.
  if (profileProblems(options.profile).length > 0) return refused(options.profile, findings);
  const profile = withProfileDefaults(options.profile);
  const routes = (Object.keys(profile.routes ?? {}) as RouteKey[]).filter((route) =>
    Object.hasOwn(SAMPLE_REQUESTS, route),
  );
  const samples = (route: RouteKey) => [...SAMPLE_REQUESTS[route], ...(options.requests?.[route] ?? [])];
  const counts = { answers: 0, errors: 0, requests: 0, paths: 0 };
  findings.push(...checkFixtureCoverage(routes, fixtures, profile));

  for (const route of routes) {
    const answers = successes(fixtures, route).flatMap((fixture) => parsed(fixture));
    const requests = samples(route).map((sample) =>
      route.startsWith('GET ') ? (sample.query ?? {}) : withoutFiles(sample.body),
    );
    counts.paths += [...(profile.routes[route]!.request ?? []), ...(profile.routes[route]!.response ?? [])].reduce(
      (n, t) => n + (t.paths?.length ?? 0),
      0,
    );
    findings.push(
      ...checkTransformPaths(profile, route, {
        requests,
        requestsFrom: "the kit's sample requests",
        answers,
        answersFrom: `any recorded answer (${fixtures.routes.get(route)?.dir ?? `fixtures/${routeDir(route)}`})`,
      }),
    );
  }

  let replay: Replay | undefined;
  try {
    replay = await startReplay(profile, fixtures.token, options.auth);
  } catch (err) {
    findings.push({
      area: 'auth',
      where: 'auth',
      message: `the authentication cannot be set up: ${(err as Error).message}`,
    });
  }
  if (replay) {
    const upstream = replay;
    try {
      const authFinding = await checkAuth(profile, replay, fixtures.token);
      if (authFinding) {
        findings.push(authFinding);
        replay = undefined;
      } else {
        for (const route of routes) {
          for (const fixture of fixtures.routes.get(route)?.answers ?? []) {
            const outcome = await replay.call(route, input(route, samples(route)[0]), fixture);
            if (fixture.status < 400) counts.answers++;
            else counts.errors++;
            findings.push(
              ...(fixture.status < 400 ? checkAnswer(route, fixture, outcome) : checkError(route, fixture, outcome)),
            );
            findings.push(...checkKeyRefusal(fixture, outcome, profile.keyRefusal));
          }
          findings.push(
            ...(await checkRequests(route, samples(route), profile, fixtures, replay, () => counts.requests++)),
          );
        }
      }
    } finally {
      await upstream.close();
    }
  }
  // Every call needs the upstream's credentials: without them nothing below was checked.
  if (!replay) {
    for (const area of ['answers', 'errors', 'requests']) {
      findings.push({
        area,
        where: 'auth',
        message: 'not checked: every call needs the authentication to work first (see the auth findings)',
      });
    }
  }
  return {
    findings,
    checked: {
      profile: `profile ${profile.id}: ${routes.length} routes, limits, cache lifetimes, error rules`,
      fixtures: 'fixtures/: every route has a recorded answer and a request schema, every file is usable',
      auth: `the ${profile.auth?.kind ?? 'oauth-client-credentials'} authentication, set up and given a token from the recorded answer`,
      transforms: `${counts.paths} transform paths exist`,
      answers: `${counts.answers} recorded answers, transformed, match the service's schemas and states`,
      errors: `${counts.errors} recorded error answers map to the error table of SPEC 7 as expected, key refusals recognised by keyRefusal`,
      requests: `${counts.requests} sample requests reach the upstream as it accepts them`,
    },
  };
}

function refused(profile: ProfileDefinition, findings: Finding[]): ConformanceReport {
  const notChecked = 'not checked: the service refuses this profile at start (see the profile findings)';
  for (const area of AREAS.filter((area) => area !== 'profile' && area !== 'fixtures'))
    findings.push({ area, where: 'profile', message: notChecked });
  const checked = Object.fromEntries(AREAS.map((area) => [area, notChecked])) as ConformanceReport['checked'];
  return {
    findings,
    checked: {
      ...checked,
      profile: `profile ${String(profile?.id)}: the keys the service needs, of their types`,
      fixtures: 'fixtures/: every file is usable',
    },
  };
}

function successes(fixtures: FixtureSet, route: RouteKey): Fixture[] {
  return (fixtures.routes.get(route)?.answers ?? []).filter((fixture) => fixture.status < 400);
}

function parsed(fixture: Fixture): unknown[] {
  try {
    return [JSON.parse(fixture.text)];
  } catch {
    return [];
  }
}

function withoutFiles(body: Record<string, unknown> | undefined): unknown {
  const { _files: _, ...rest } = body ?? {};
  return rest;
}

/** A sample as the pipeline gets it: the jobs plugin takes `_files` out of the body and decodes them. */
function input(
  route: RouteKey,
  sample: SampleRequest,
): { query?: Record<string, string>; body?: unknown; files?: Record<string, Buffer> } {
  if (route.startsWith('GET ')) return { query: { ...sample.query } };
  const files = (sample.body?._files ?? {}) as Record<string, string>;
  return {
    body: withoutFiles(sample.body),
    files: Object.fromEntries(Object.entries(files).map(([role, content]) => [role, Buffer.from(content, 'base64')])),
  };
}

function checkFixtureCoverage(routes: RouteKey[], fixtures: FixtureSet, profile: Profile): Finding[] {
  const findings: Finding[] = [];
  // A keyRefusal no recorded answer was tested against may never match what the upstream says.
  const recorded = routes.some((route) => fixtures.routes.get(route)?.answers.some(describesKeyRefusal));
  if (profile.keyRefusal?.body instanceof RegExp && !recorded) {
    const route = routes.includes('GET /dossiers')
      ? 'GET /dossiers'
      : (routes.find((r) => r !== 'GET /status') ?? routes[0]);
    const dir = route ? `fixtures/${routeDir(route)}` : 'fixtures';
    findings.push({
      area: 'fixtures',
      where: dir,
      message:
        `record the upstream's answer to an unknown CFA key, e.g. ${dir}/refused-key.json ({"status": ${profile.keyRefusal.status ?? 403}, "body": ..., ` +
        '"expect": {"status": 403, "code": "HTTP_ERROR"}}): the kit checks that keyRefusal recognises it',
    });
  }
  for (const route of routes) {
    const dir = `fixtures/${routeDir(route)}`;
    if (successes(fixtures, route).length === 0) {
      findings.push({
        area: 'fixtures',
        where: dir,
        message: `no recorded successful answer of ${route}: save one the upstream gave as ${dir}/<name>.json ({"status": 200, "body": ...})`,
      });
    }
    if (route !== 'GET /status' && !fixtures.routes.get(route)?.requestSchema) {
      findings.push({
        area: 'fixtures',
        where: dir,
        message: `declare what the upstream accepts for ${route} in ${dir}/${REQUEST_SCHEMA_FILE} (JSON Schema of its ${route.startsWith('GET ') ? 'query' : 'body'})`,
      });
    }
  }
  for (const [route, entry] of fixtures.routes) {
    if (!routes.includes(route))
      findings.push({
        area: 'fixtures',
        where: entry.dir,
        message: `the profile has no ${route}: remove the folder, or add the route`,
      });
  }
  return findings;
}

/** The token comes from the recorded token answer, as the strategy reads it. */
async function checkAuth(profile: Profile, replay: Replay, token: Fixture | undefined): Promise<Finding | undefined> {
  const oauth = (profile.auth?.kind ?? 'oauth-client-credentials') === 'oauth-client-credentials';
  if (oauth && !token) {
    return {
      area: 'auth',
      where: `fixtures/${TOKEN_FIXTURE}`,
      message:
        'record the token endpoint\'s answer there ({"status": 200, "body": {...}}): the kit gets its token from it',
    };
  }
  try {
    const headers = await replay.authHeaders();
    if (Object.keys(headers).length === 0)
      return { area: 'auth', where: 'auth', message: 'the authentication gives no header to send upstream' };
    return undefined;
  } catch (err) {
    const fields = token ? Object.keys(parsed(token)[0] ?? {}) : [];
    return {
      area: 'auth',
      where: token?.file ?? 'auth',
      message: `no token from the recorded answer (${(err as Error).message})${fields.length ? `; its fields are ${fields.join(', ')}: set tokenField and expiresInField of oauthClientCredentials to them` : ''}`,
    };
  }
}

async function checkRequests(
  route: RouteKey,
  samples: SampleRequest[],
  profile: Profile,
  fixtures: FixtureSet,
  replay: Replay,
  counted: () => void,
): Promise<Finding[]> {
  const schema = fixtures.routes.get(route)?.requestSchema;
  if (!schema) return [];
  const check = compileRequestSchema(schema.schema, schema.file);
  if (typeof check !== 'function') return [check];
  const findings: Finding[] = [];
  const answer = successes(fixtures, route)[0];
  for (const sample of samples) {
    const outcome = await replay.call(route, input(route, sample), answer);
    counted();
    findings.push(...checkSentRequest(route, sample, profile.routes[route]!, outcome.request, check, schema.file));
  }
  return findings;
}

/** Minimal shape of a tap `Test` (or any TAP producer with subtests). */
export interface TestLike {
  test(name: string, fn: (t: TestLike) => Promise<void> | void): unknown;
  pass(message: string): unknown;
  fail(message: string): unknown;
}

/** Runs the suite and reports one subtest per area: a pass, or one failure per finding. */
export async function conformance(t: TestLike, options: ConformanceOptions): Promise<ConformanceReport> {
  const report = await checkAdapter(options);
  for (const area of AREAS) {
    const found = report.findings.filter((finding) => finding.area === area);
    await t.test(`conformance: ${area}`, async (t) => {
      if (found.length === 0) t.pass(report.checked[area]);
      for (const finding of found) t.fail(describeFinding(finding));
    });
  }
  return report;
}
