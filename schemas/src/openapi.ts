/**
 * The OpenAPI 3.0.3 document served at GET /doc (SPEC 4.2), built from the route table and the
 * JSON Schemas, so /doc cannot describe a route or a field the service does not have.
 */
import { allSchemaIds, readSchema, refToSchemaId, type JsonSchema, type SchemaId } from './catalog.js';
import { admitsNull } from './optional-nulls.js';
import {
  operations,
  operationIds,
  type ErrorStatus,
  type OperationId,
  type OperationSpec,
  type RouteTag,
} from './route-manifest.js';
import { ERROR_CODES, errorCodeSpec, errorCodes } from './error-codes.js';
import { errorExamples, operationExamples, otherErrorExample } from './route-examples.js';
import { notificationExamples, notificationHeaderExamples } from './event-examples.js';
import type { EventType } from './generated/types.js';

/** D27: the routes of the spec are version 1 of the interface; every answer carries Svc-Api-Version. */
export const API_VERSION = '1';

export interface OpenApiDocument {
  openapi: '3.0.3';
  info: { title: string; version: string; description: string };
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
    parameters: Record<string, unknown>;
    headers: Record<string, unknown>;
    responses: Record<string, unknown>;
  };
}

/** The component name of each documented error status; what each stands for is the table's (error-codes.ts). */
const ERROR_RESPONSES: Record<ErrorStatus, string> = {
  400: 'ValidationError',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Unprocessable',
  429: 'RateLimited',
  500: 'InternalError',
  501: 'NotSupported',
  502: 'BadGateway',
  503: 'Unavailable',
  504: 'Timeout',
};

/**
 * The codes of the table answered with `status`, each with when; and UPSTREAM_ERROR, which passes
 * the upstream's status on, for the statuses an upstream answer keeps (the upstream's 401, 403, 404
 * become the service's own codes; 409, 413 and 415 are about the request to this service).
 */
function errorStatusDescription(status: ErrorStatus): string {
  const own = errorCodes
    .filter((code) => !errorCodeSpec(code).upstreamStatus && ERROR_CODES[code].status === status)
    .map((code) => `${code}: ${ERROR_CODES[code].when}.`);
  if (status === 400 || status === 422 || status >= 429)
    own.push(`UPSTREAM_ERROR ${status}: the upstream's own answer, in \`upstream\`.`);
  return own.join(' ');
}

const TAGS: Record<RouteTag, string> = {
  system: 'Liveness, readiness, this document, metrics.',
  opco: 'Status of an upstream body and key information.',
  dossiers: 'Apprenticeship dossiers (SPEC 2.1 to 2.3, 4.5 to 4.8).',
  factures: 'Invoices (SPEC 2.4, 4.9, 4.10).',
  conventions: 'Training agreements (SPEC 4.11).',
  certificats: 'Completion certificates (SPEC 4.12).',
  documents: 'Documents attached to upstream objects (SPEC 4.12b).',
  jobs: 'Asynchronous jobs created by the POST routes (SPEC 2.5, 4.13).',
  sync: 'Bulk sync of all dossiers (SPEC 2.6, 4.14).',
  webhooks: 'Event subscriptions and delivery logs (SPEC 2.7, 2.8, 4.15, 6).',
  pollers: 'Automatic polling after a sync (D21).',
  audit: 'Who did what to which job, webhook and sync: the audit records of SPEC 5.3 and 5.5 (D32).',
  operator: 'Across tenants, for operators: behind Authorization: Bearer <OPCO_PROXY_ADMIN_KEY> (P9).',
};

const PATH_PARAMETERS: Record<string, { component: string; description: string; format?: string }> = {
  opcoId: { component: 'OpcoId', description: 'The upstream body (OPCO).' },
  jobId: { component: 'JobId', description: 'Job identifier.', format: 'uuid' },
  syncId: { component: 'SyncId', description: 'Sync identifier.' },
  id: { component: 'WebhookId', description: 'Webhook identifier.' },
  deliveryId: { component: 'DeliveryId', description: 'Delivery identifier (Svc-Delivery-Id).' },
  asset: { component: 'Asset', description: 'File name of a script or style sheet of the reference page.' },
};

const COMPONENT = '#/components/';
const ref = (section: string, name: string) => ({ $ref: `${COMPONENT}${section}/${name}` });
const API_VERSION_HEADER = { 'Svc-Api-Version': ref('headers', 'SvcApiVersion') };

/**
 * The document of the given operations (by default all of them): a kernel passes the operations
 * it mounted, so /doc never lists a route of a plugin that is not enabled. Frozen.
 */
export function buildOpenApi(mounted: readonly OperationId[] = operationIds): OpenApiDocument {
  // A copy, so freezing it never freezes the schemas ajv holds.
  return deepFreeze(structuredClone(build(mounted)));
}

function build(mounted: readonly OperationId[]): OpenApiDocument {
  const titles = schemaTitles();
  const schemas: Record<string, unknown> = {};
  const bodies = new Set(
    operationIds.map((id) => (operations[id] as OperationSpec).body).filter((id) => id !== undefined),
  );
  // The config files are the operator's, and the hub's schemas are another process's interface.
  for (const id of allSchemaIds.filter((id) => id !== 'kernel-config' && !id.startsWith('hub-'))) {
    schemas[titles.get(id)!] = toOpenApiSchema(readSchema(id), titles, bodies.has(id));
  }

  const paths: OpenApiDocument['paths'] = {};
  for (const id of mounted) {
    const route = operations[id];
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation(id, route, titles);
  }

  return {
    openapi: '3.0.3',
    info: {
      title: 'opco-proxy',
      version: API_VERSION,
      description:
        'One REST API in front of the OPCO funding bodies. GET routes answer synchronously; POST routes on an upstream body ' +
        'are asynchronous: 202 with a job to poll, and a webhook when it ends. Errors share one body (ErrorBody).',
    },
    // Only the sections this instance serves, so a page of /doc shows no empty section.
    tags: Object.entries(TAGS)
      .filter(([name]) => mounted.some((id) => operations[id].tag === name))
      .map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-KEY',
          description: 'The CFA key assigned by the upstream body; its SHA-256 is the tenant.',
        },
        OperatorKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The operator key of this deployment (OPCO_PROXY_ADMIN_KEY), for the operator routes and the console.',
        },
      },
      parameters: {
        ...Object.fromEntries(
          Object.entries(PATH_PARAMETERS).map(([name, p]) => [
            p.component,
            {
              name,
              in: 'path',
              required: true,
              description: p.description,
              schema: { type: 'string', ...(p.format ? { format: p.format } : {}) },
            },
          ]),
        ),
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Scoped to the tenant, kept 24 hours (D15): a repeat answers 200 duplicate with the first jobId.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      headers: {
        SvcApiVersion: {
          description: 'Version of the service interface (D27).',
          schema: { type: 'string', enum: [API_VERSION] },
        },
        RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
      },
      responses: {
        ...Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([key, name]) => {
            const status = Number(key) as ErrorStatus;
            return [name, errorResponse(errorStatusDescription(status), status === 429, errorExamples[status])];
          }),
        ),
        Error: errorResponse(
          'Any other error, e.g. UPSTREAM_ERROR with the upstream status, or INTERNAL_ERROR (500).',
          false,
          otherErrorExample,
        ),
      },
    },
  };
}

function operation(
  operationId: OperationId,
  route: OperationSpec,
  titles: Map<SchemaId, string>,
): Record<string, unknown> {
  const parameters: unknown[] = [...route.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) =>
    ref('parameters', PATH_PARAMETERS[name].component),
  );
  if (route.query) parameters.push(...queryParameters(route.query, titles));
  if (route.async) parameters.push(ref('parameters', 'IdempotencyKey'));

  const examples = operationExamples[operationId] as { request?: unknown; responses: Record<string, unknown> };
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(route.responses)) {
    const example = examples.responses[status];
    const content: Record<string, unknown> = {};
    for (const mediaType of [r.contentType ?? 'application/json'].flat()) {
      const schema = r.schema
        ? ref('schemas', titles.get(r.schema)!)
        : mediaType === 'application/json'
          ? { type: 'object' }
          : { type: 'string' };
      content[mediaType] = { schema, example };
    }
    responses[status] = { description: r.description, headers: API_VERSION_HEADER, content };
  }
  for (const status of route.errors) responses[String(status)] = ref('responses', ERROR_RESPONSES[status]);
  responses.default = ref('responses', 'Error');

  return {
    operationId,
    summary: route.summary,
    description: [route.description, `SPEC ${route.source}.`].filter(Boolean).join(' '),
    tags: [route.tag],
    security: route.apiKey ? [{ ApiKey: [] }] : route.operator ? [{ OperatorKey: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            description: REQUEST_BODY,
            required: true,
            content: {
              'application/json': { schema: ref('schemas', titles.get(route.body)!), example: examples.request },
            },
          },
        }
      : {}),
    responses,
    ...(operationId === 'createWebhook' ? { callbacks: notificationCallbacks(titles) } : {}),
  };
}

/**
 * One callback per event type (OpenAPI 3.0 has no top-level webhooks): the POST a subscribed
 * callback URL receives, its signed headers and an example body, each as the delivery sends it.
 */
function notificationCallbacks(titles: Map<SchemaId, string>): Record<string, unknown> {
  const events = readSchema('event-type').enum as EventType[];
  return Object.fromEntries(
    events.map((event) => {
      const example = notificationExamples[event];
      const post = {
        summary: `${event} notification`,
        description:
          `Sent to every active webhook of the tenant subscribed to ${event}; \`data\` holds ${Object.keys(example.data)
            .map((k) => `\`${k}\``)
            .join(', ')} (D22). ` +
          'Signed with the webhook secret in two ways (Svc-Signature; Standard Webhooks webhook-signature), ' +
          `with \`User-Agent: opco-proxy/<version>\`. Verify from the raw body before parsing it (docs/webhooks.md).`,
        parameters: notificationHeaderExamples(event).map((h) => ({
          name: h.name,
          in: 'header',
          required: h.required,
          description: h.description,
          schema: {
            type: 'string',
            ...(h.pattern ? { pattern: h.pattern } : {}),
            ...(h.name === 'Svc-Event' ? { enum: [event] } : {}),
          },
          example: h.example,
        })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('schemas', titles.get('webhook-notification')!), example } },
        },
        responses: {
          '2XX': {
            description:
              'Received. Any other answer, none within 10 s, or a redirect (never followed) is a failure, tried again after 1 s, 5 s ' +
              'and 15 s (4 attempts), then the delivery is failed; resend or recover it from the webhook routes.',
          },
        },
      };
      return [event, { '{$request.body#/callbackUrl}': { post } }];
    }),
  );
}

/** Query schemas are flat objects of strings: one OpenAPI parameter per property. */
function queryParameters(id: SchemaId, titles: Map<SchemaId, string>): unknown[] {
  const schema = readSchema(id);
  const required = (schema.required as string[] | undefined) ?? [];
  return Object.entries(schema.properties as Record<string, JsonSchema>).map(([name, property]) => {
    const { description, ...rest } = toOpenApiSchema(property, titles);
    return {
      name,
      in: 'query',
      required: required.includes(name),
      ...(description ? { description } : {}),
      schema: rest,
    };
  });
}

function errorResponse(description: string, retryAfter: boolean, example: unknown): unknown {
  return {
    description,
    headers: { ...API_VERSION_HEADER, ...(retryAfter ? { 'Retry-After': ref('headers', 'RetryAfter') } : {}) },
    content: { 'application/json': { schema: ref('schemas', 'ErrorBody'), example } },
  };
}

function schemaTitles(): Map<SchemaId, string> {
  const titles = new Map<SchemaId, string>();
  for (const id of allSchemaIds) {
    const title = readSchema(id).title;
    if (typeof title !== 'string') throw new Error(`schema ${id} has no title`);
    if ([...titles.values()].includes(title)) throw new Error(`schema title ${title} is used twice`);
    titles.set(id, title);
  }
  return titles;
}

const SCHEMA_MAPS = ['properties', 'patternProperties'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'not'];
/** Draft-07 keywords OpenAPI 3.0 does not know; they only tighten validation, which ajv does. */
const DROPPED = new Set([
  '$schema',
  '$id',
  'errorMessage',
  'propertyNames',
  'if',
  'then',
  'else',
  'definitions',
  'examples',
]);

/** What every request body says of null (issue 37, optional-nulls.ts). */
const REQUEST_BODY =
  'JSON. An optional field sent as null is treated as absent (as Java and .NET serializers write an absent field); ' +
  'a required field sent as null is a 400 VALIDATION_ERROR naming it.';

/**
 * Draft-07 to the OpenAPI 3.0 schema dialect: file `$ref`s point into components, `const`
 * becomes a one-value enum, and type lists become `nullable` or a oneOf of types. In a request
 * body (`request`), an optional property takes null, which means absent (optional-nulls.ts): it
 * is marked `nullable`.
 */
function toOpenApiSchema(schema: JsonSchema, titles: Map<SchemaId, string>, request = false): JsonSchema {
  const out: JsonSchema = {};
  const required = new Set((schema.required as string[] | undefined) ?? []);
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (key === '$ref') {
      const id = refToSchemaId(String(value));
      if (!id) throw new Error(`unresolvable $ref ${String(value)}`);
      out.$ref = `${COMPONENT}schemas/${titles.get(id)}`;
    } else if (key === 'const') out.enum = [value];
    else if (key === 'type' && Array.isArray(value)) Object.assign(out, typeList(value as string[]));
    else if (SCHEMA_MAPS.includes(key)) {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, JsonSchema>).map(([name, sub]) => {
          const converted = toOpenApiSchema(sub, titles, request);
          const nullMeansAbsent = request && key === 'properties' && !required.has(name) && !admitsNull(sub);
          return [name, nullMeansAbsent ? nullable(converted) : converted];
        }),
      );
    } else if (SCHEMA_LISTS.includes(key))
      out[key] = (value as JsonSchema[]).map((sub) => toOpenApiSchema(sub, titles, request));
    else if (SUBSCHEMAS.includes(key) && typeof value === 'object')
      out[key] = toOpenApiSchema(value as JsonSchema, titles, request);
    else out[key] = value;
  }
  return out;
}

/**
 * `schema` that also takes null: `nullable` beside it (with null in its enum, which OpenAPI 3.0.3
 * would otherwise let refuse it); a `$ref`, whose siblings OpenAPI 3.0 ignores, wrapped in an
 * allOf, as generators (openapi-generator, NSwag) read a nullable reference.
 */
function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string') return { allOf: [schema], nullable: true };
  return {
    ...schema,
    nullable: true,
    ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}),
  };
}

function typeList(types: string[]): JsonSchema {
  const nullable = types.includes('null');
  const others = types.filter((t) => t !== 'null');
  const typed = others.length === 1 ? { type: others[0] } : { oneOf: others.map((type) => ({ type })) };
  return nullable ? { ...typed, nullable: true } : typed;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
