/**
 * Every sample service request must reach the upstream as a request the upstream accepts: the
 * query of a GET, the JSON body of POST /dossiers, the JSON metadata part of an upload, checked
 * against the schema the integrator declares for the route (`upstream-request.schema.json`,
 * JSON Schema draft-07, written from the upstream's documentation).
 */
import { Ajv, type ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { RouteKey, RouteProfile } from '@opco-proxy/core';
import type { ReceivedRequest } from './fixture-upstream.js';
import type { Finding } from './findings.js';
import type { SampleRequest } from './request-corpus.js';

/** The integrator's schemas are theirs: a lenient compiler, every error reported. */
const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
ajvFormats.default(ajv);

export function compileRequestSchema(
  schema: Record<string, unknown>,
  file: string,
): ((value: unknown) => string[]) | Finding {
  try {
    const check = ajv.compile(schema);
    return (value) =>
      check(value) ? [] : [...new Set((check.errors ?? []).flatMap((error) => describe(error) ?? []))];
  } catch (err) {
    return { area: 'requests', where: file, message: `not a usable JSON Schema: ${(err as Error).message}` };
  }
}

/** `<dotted.path>: <what is wrong>`, one line per problem the integrator can act on. */
function describe(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  const pointer = error.instancePath.slice(1).split('/').filter(Boolean);
  // A refused property name is reported twice by ajv: once by its pattern (kept), once as `propertyNames`.
  if (error.keyword === 'propertyNames') return undefined;
  if (error.propertyName !== undefined) {
    return `${[...pointer, error.propertyName].join('.')}: a name the upstream does not accept (${error.message})`;
  }
  if (error.keyword === 'required') pointer.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') pointer.push(String(params.additionalProperty));
  const path = pointer.length > 0 ? pointer.join('.') : '(the whole value)';
  if (error.keyword === 'required') return `${path}: missing`;
  if (error.keyword === 'additionalProperties') return `${path}: not a field the upstream knows`;
  return `${path}: ${error.message}`;
}

/** What the upstream received for a sample request, as the schema is written for it. */
export function sentValue(routeProfile: RouteProfile, request: ReceivedRequest): { value?: unknown; problem?: string } {
  if (request.method === 'GET') return { value: request.query };
  if (!routeProfile.multipart)
    return request.json === undefined ? { problem: 'no JSON body reached the upstream' } : { value: request.json };
  const part = request.parts?.find((p) => p.name === routeProfile.multipart);
  if (!part) return { problem: `no multipart part "${routeProfile.multipart}" reached the upstream` };
  try {
    return { value: JSON.parse(part.text) as unknown };
  } catch {
    return { problem: `the part "${routeProfile.multipart}" is not JSON` };
  }
}

export function checkSentRequest(
  route: RouteKey,
  sample: SampleRequest,
  routeProfile: RouteProfile,
  request: ReceivedRequest | undefined,
  check: (value: unknown) => string[],
  schemaFile: string,
): Finding[] {
  const where = `${route} (sample request "${sample.name}")`;
  if (!request) return [{ area: 'requests', where, message: 'nothing reached the upstream' }];
  const expectedPath = new URL(routeProfile.upstream, 'http://upstream').pathname;
  const findings: Finding[] = [];
  if (request.path !== expectedPath)
    findings.push({ area: 'requests', where, message: `sent to ${request.path}, not ${expectedPath}` });
  const { value, problem } = sentValue(routeProfile, request);
  if (problem) return [...findings, { area: 'requests', where, message: problem }];
  for (const error of check(value)) {
    findings.push({
      area: 'requests',
      where,
      message: `the upstream request ${route.startsWith('GET ') ? 'query' : 'body'} does not satisfy ${schemaFile}, ${error}: add or fix a request transform (or the schema, if the upstream accepts it)`,
    });
  }
  return findings;
}
