/**
 * Every path a transform declares must name a field that exists: one that some value meets at
 * that point of the list (a sample request on its way up, a recorded answer on its way down), or
 * one the service's schema declares on the service's side of the list. A transform at a path
 * that exists nowhere does nothing, silently; that is the typo this check is for.
 *
 * Which side of a list speaks the service's names: a request list, up to and including its first
 * reshaping transform (rename, renameKeys, pageFrom, wrapBareArray); a response list, after its
 * last one.
 */
import { applyTransforms, type Profile, type RouteKey, type Transform } from '@opco-proxy/core';
import type { SchemaId } from '@opco-proxy/schemas';
import type { Finding } from './findings.js';
import { answerSchemaOf, requestSchemaOf, schemaDeclares } from './service-schemas.js';

export interface PathInputs {
  /** Sample service requests of the route (queries or bodies), `_files` left out. */
  requests: unknown[];
  /** Where they come from, for messages. */
  requestsFrom: string;
  /** Recorded successful answers of the route, parsed. */
  answers: unknown[];
  answersFrom: string;
}

export function checkTransformPaths(profile: Profile, route: RouteKey, inputs: PathInputs): Finding[] {
  const routeProfile = profile.routes[route];
  if (!routeProfile) return [];
  return [
    ...checkList(
      route,
      'request',
      routeProfile.request ?? [],
      inputs.requests,
      inputs.requestsFrom,
      requestSchemaOf(route),
    ),
    ...checkList(
      route,
      'response',
      routeProfile.response ?? [],
      inputs.answers,
      inputs.answersFrom,
      answerSchemaOf(route),
    ),
  ];
}

function checkList(
  route: RouteKey,
  list: 'request' | 'response',
  transforms: readonly Transform[],
  values: unknown[],
  from: string,
  schema: SchemaId | undefined,
): Finding[] {
  const findings: Finding[] = [];
  const reshaping = transforms
    .map((transform, index) => (transform.reshapes ? index : -1))
    .filter((index) => index >= 0);
  const serviceSide = (index: number) =>
    list === 'request'
      ? reshaping.length === 0 || index <= reshaping[0]
      : reshaping.length === 0 || index > reshaping.at(-1)!;
  let stage = values;
  transforms.forEach((transform, index) => {
    for (const path of transform.paths ?? []) {
      const segments = path.split('.');
      if (stage.some((value) => reaches(value, segments))) continue;
      if (schema && serviceSide(index) && schemaDeclares(schema, segments)) continue;
      const side = serviceSide(index)
        ? `the service's names${schema ? ` (schema ${schema})` : ''}`
        : "the upstream's names";
      findings.push({
        area: 'transforms',
        where: `${route} ${list}[${index}] ${transform.name}`,
        message:
          `path "${path}" matches no field of ${from}${schema && serviceSide(index) ? ` and is not a field of the service schema ${schema}` : ''}; ` +
          `at this point of the list fields bear ${side}: fix the path, or ${list === 'response' ? 'record an answer that has this field' : 'declare the field'}`,
      });
    }
    stage = stage.map((value) => applyTransforms(value, [transform]));
  });
  return findings;
}

/** Whether the dotted path designates at least one existing slot, as the transforms resolve paths. */
function reaches(value: unknown, segments: readonly string[]): boolean {
  const [head, ...rest] = segments;
  if (head === undefined) return true;
  let children: unknown[] = [];
  if (Array.isArray(value)) {
    if (head === '*') children = value;
    else if (/^\d+$/.test(head) && Number(head) < value.length) children = [value[Number(head)]];
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (head === '*') children = Object.values(record);
    else if (Object.hasOwn(record, head)) children = [record[head]];
  }
  return children.some((child) => reaches(child, rest));
}
