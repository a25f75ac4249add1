/**
 * Every answer the end-to-end suites receive is checked against the OpenAPI document the
 * service publishes (the route manifest through buildOpenApi): the operation the request
 * reached, its status among those documented, its body against the documented schema (compiled
 * from the document itself by a separate ajv, so the check does not reuse the service's own
 * validation path), the error body of SPEC 7 on every error, and the headers every answer must
 * carry. A mismatch fails the test that made the request.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { buildOpenApi, isDateOrTimestamp } from '@opco-proxy/schemas';

export type { Contract };

interface Operation {
  id: string;
  path: string;
  method: string;
  pattern: RegExp;
  responses: Record<string, { schema?: ValidateFunction; json: boolean }>;
}

type Document = {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, any> }>>;
  components: { schemas: Record<string, object>; responses: Record<string, any> };
};

/** The checks of one document: the full one, or the /doc an instance serves (its plugins' routes only). */
class Contract {
  readonly operations: Operation[];
  readonly errorBody: ValidateFunction;
  readonly ajv = new Ajv({ strict: false, allErrors: true });

  constructor(private readonly doc: Document) {
    ajvFormats.default(this.ajv);
    this.ajv.addFormat('byte', true);
    this.ajv.addFormat('date-or-timestamp', isDateOrTimestamp);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      this.ajv.addSchema(schema, `#/components/schemas/${name}`);
    this.errorBody = this.ajv.compile({ $ref: '#/components/schemas/ErrorBody' });
    this.operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        id: op.operationId,
        path,
        method: method.toUpperCase(),
        // The router takes a trailing slash as the same path (`/docs/` is `/docs`).
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
        responses: Object.fromEntries(
          Object.entries(op.responses).map(([status, response]) => [status, this.compileResponse(response)]),
        ),
      })),
    );
    // Literal paths first, as the service routes them.
    this.operations.sort((a, b) => Number(a.path.startsWith('/{')) - Number(b.path.startsWith('/{')));
  }

  private compileResponse(response: any): { schema?: ValidateFunction; json: boolean } {
    const resolved = response.$ref ? this.doc.components.responses[String(response.$ref).split('/').pop()!] : response;
    const json = resolved.content?.['application/json'];
    return {
      json: Boolean(json),
      schema: json?.schema?.$ref ? this.ajv.compile({ $ref: json.schema.$ref }) : undefined,
    };
  }
}

const contracts = new Map<string, Contract>();

/** The contract of a document, compiled once per distinct document. */
export function contractOf(doc: unknown = buildOpenApi()): Contract {
  const key = JSON.stringify(Object.keys((doc as Document).paths).sort());
  let contract = contracts.get(key);
  if (!contract) {
    contract = new Contract(doc as Document);
    contracts.set(key, contract);
  }
  return contract;
}

/** The methods the router takes on some path (@koa/router's own list); any other is 501 on every path. */
const ROUTED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

let checked = 0;
process.on('exit', () => {
  if (checked > 0) console.error(`# contract: ${checked} answers checked against the OpenAPI document`);
});

/** Problems of one answer; empty when it is what the document says. */
export function contractProblems(
  method: string,
  url: string,
  status: number,
  headers: Headers,
  text: string,
  options: { checkBody?: boolean; contract?: Contract } = {},
): string[] {
  const { operations, errorBody, ajv } = options.contract ?? contractOf();
  checked += 1;
  const path = new URL(url).pathname;
  const problems: string[] = [];
  const body = parse(text);
  if (headers.get('svc-api-version') !== '1') problems.push('no Svc-Api-Version: 1');
  if (!headers.get('x-request-id')) problems.push('no X-Request-Id');
  if (status >= 400) {
    if (!errorBody(body))
      problems.push(`error body is not SPEC 7's: ${ajv.errorsText(errorBody.errors)} (${text.slice(0, 200)})`);
    if (status === 429 && !headers.get('retry-after')) problems.push('429 without Retry-After');
    if (status === 503 && (body as { code?: string })?.code === 'UNAVAILABLE' && !headers.get('retry-after'))
      problems.push('503 UNAVAILABLE without Retry-After');
  }
  if (!ROUTED_METHODS.has(method)) {
    if (status !== 501 || (body as { code?: string })?.code !== 'NOT_SUPPORTED')
      problems.push(`${method}, which no route takes, answered ${status}, not 501 NOT_SUPPORTED`);
    return problems;
  }
  if (method === 'OPTIONS' && status === 204) {
    if (!headers.get('allow')) problems.push('OPTIONS without Allow');
    return problems;
  }
  const op = operations.find((o) => o.method === (method === 'HEAD' ? 'GET' : method) && o.pattern.test(path));
  if (!op) {
    if (status === 405 && !headers.get('allow')) problems.push('405 without Allow');
    if (![400, 403, 404, 405, 408, 413, 415, 429, 431].includes(status))
      problems.push(`no operation for ${method} ${path} answered ${status}`);
    return problems;
  }
  const documented = op.responses[String(status)];
  if (!documented) {
    problems.push(`${op.id} answered ${status}, which /doc does not list`);
    return problems;
  }
  if (
    status < 400 &&
    options.checkBody !== false &&
    documented.schema &&
    method !== 'HEAD' &&
    !documented.schema(body)
  ) {
    problems.push(`${op.id} ${status} body does not match /doc: ${ajv.errorsText(documented.schema.errors)}`);
  }
  return problems;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
