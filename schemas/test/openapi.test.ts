/** GET /doc (SPEC 4.2): every route of SPEC 4 and beyond, built from the route table and the schemas. */
import t from 'tap';
import {
  buildOpenApi,
  operations,
  operationIds,
  routerPath,
  findOperation,
  isSchemaId,
  API_VERSION,
  ERROR_CODES,
} from '../src/index.js';

/** SPEC 4, route by route, plus the routes the decisions add. */
const SPEC_ROUTES = [
  'GET /health', // 4.1
  'GET /doc', // 4.2
  'GET /{opcoId}/status', // 4.3
  'GET /{opcoId}/cfakeyinfo', // 4.4
  'GET /{opcoId}/dossiers', // 4.5
  'GET /{opcoId}/dossiers/etats', // 4.6
  'GET /{opcoId}/dossiers/liste', // 4.7
  'POST /{opcoId}/dossiers', // 4.8
  'POST /{opcoId}/factures', // 4.9
  'GET /{opcoId}/factures/etats', // 4.10
  'POST /{opcoId}/conventions', // 4.11
  'POST /{opcoId}/certificats', // 4.12
  'POST /{opcoId}/documents', // 4.12b
  'GET /{opcoId}/jobs/{jobId}', // 4.13
  'POST /sync/dossiers', // 4.14
  'GET /sync/{syncId}',
  'DELETE /sync/{syncId}',
  'POST /webhooks', // 4.15
  'GET /webhooks',
  'PATCH /webhooks/{id}',
  'DELETE /webhooks/{id}',
  'GET /webhooks/{id}/logs',
];
const ADDED_ROUTES = [
  'GET /ready',
  'GET /metrics',
  'GET /pollers',
  'DELETE /pollers/{opcoId}',
  // P10: delivery control
  'POST /webhooks/{id}/test',
  'POST /webhooks/{id}/deliveries/{deliveryId}/resend',
  'POST /webhooks/{id}/recover',
  'POST /webhooks/{id}/rotate-secret',
  // D32: audit records
  'GET /audit',
  // P9: operators
  ...OPERATOR_ROUTES(),
  'GET /console',
  'GET /console/app.js',
  'GET /console/app.css',
  // The reference page that renders /doc, and its scripts and styles
  'GET /docs',
  'GET /docs/assets/{asset}',
];
function OPERATOR_ROUTES(): string[] {
  return ['jobs', 'deliveries', 'webhooks', 'syncs', 'pollers', 'upstreams', 'queues', 'audit', 'history']
    .map((list) => `GET /admin/${list}`)
    .concat(
      'POST /admin/deliveries/{deliveryId}/resend',
      'GET /admin/jobs/{jobId}',
      'POST /admin/jobs/{jobId}/retry',
      'POST /admin/jobs/retry',
    );
}
const OPEN_ROUTES = [
  'GET /health',
  'GET /doc',
  'GET /docs',
  'GET /docs/assets/{asset}',
  'GET /ready',
  'GET /metrics',
  'GET /console',
  'GET /console/app.js',
  'GET /console/app.css',
];
const ASYNC_POSTS = ['dossiers', 'factures', 'conventions', 'certificats', 'documents'].map(
  (r) => `POST /{opcoId}/${r}`,
);

type Json = Record<string, any>;
const doc = buildOpenApi() as unknown as Json;
const operationOf = (key: string): Json | undefined => {
  const [method, path] = key.split(' ');
  return doc.paths[path]?.[method.toLowerCase()];
};
const allOperations = (): [string, Json][] =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op as Json] as [string, Json]),
  );

t.test('document header (D27)', async (t) => {
  t.equal(doc.openapi, '3.0.3');
  t.equal(doc.info.version, '1');
  t.equal(API_VERSION, '1');
  t.same(doc.components.securitySchemes.ApiKey, {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-KEY',
    description: doc.components.securitySchemes.ApiKey.description,
  });
});

t.test('every route of SPEC 4 and of the decisions is documented, and nothing else', async (t) => {
  for (const key of [...SPEC_ROUTES, ...ADDED_ROUTES]) t.ok(operationOf(key), key);
  t.same(
    allOperations()
      .map(([key]) => key)
      .sort(),
    [...SPEC_ROUTES, ...ADDED_ROUTES].sort(),
  );
  t.equal(operationIds.length, SPEC_ROUTES.length + ADDED_ROUTES.length);
  t.same(
    allOperations()
      .map(([, op]) => op.operationId)
      .sort(),
    [...operationIds].sort(),
    'operationIds are the manifest keys',
  );
});

t.test('every $ref resolves inside the document', async (t) => {
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref') refs.push(String(v));
        else walk(v);
      }
    }
  };
  walk(doc);
  t.ok(refs.length > 100, `${refs.length} refs`);
  for (const ref of new Set(refs)) {
    t.match(ref, /^#\/components\//, ref);
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Json | undefined)?.[key], doc);
    t.ok(target, `${ref} resolves`);
  }
});

t.test('schemas are in the OpenAPI 3.0 dialect', async (t) => {
  const leftovers: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}/${i}`));
    if (!node || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (['$id', '$schema', 'const', 'errorMessage', 'propertyNames', 'definitions'].includes(k))
        leftovers.push(`${path}/${k}`);
      if (k === 'type' && Array.isArray(v)) leftovers.push(`${path}/type`);
      if (k !== 'properties')
        walk(v, `${path}/${k}`); // property names may be anything
      else for (const [name, sub] of Object.entries(v as Json)) walk(sub, `${path}/properties/${name}`);
    }
  };
  walk(doc.components.schemas, '#/components/schemas');
  t.same(leftovers, []);
  t.same(doc.components.schemas.Job.properties.startedAt, { type: 'string', nullable: true, format: 'date-time' });
  // Optional properties of a request body are nullable: null there means absent (issue 37).
  t.same(doc.components.schemas.CertificatBody.properties.numeroInterneFacture, {
    oneOf: [{ type: 'string' }, { type: 'number' }],
    nullable: true,
  });
  t.same(doc.components.schemas.FactureBody.properties._files, {
    allOf: [{ $ref: '#/components/schemas/Files' }],
    nullable: true,
  });
  t.notOk(doc.components.schemas.KernelConfig, 'the operator config is not part of the HTTP interface');
});

t.test(
  'security: X-API-KEY everywhere but health, doc, docs, ready, metrics, the console page and the operator routes',
  async (t) => {
    for (const [key, op] of allOperations()) {
      const expected = OPEN_ROUTES.includes(key)
        ? []
        : OPERATOR_ROUTES().includes(key)
          ? [{ OperatorKey: [] }]
          : [{ ApiKey: [] }];
      t.same(op.security, expected, key);
    }
  },
);

t.test('async POSTs: Idempotency-Key, 202 and 200 duplicate (SPEC 4.0.4, D15)', async (t) => {
  const idempotency = { $ref: '#/components/parameters/IdempotencyKey' };
  for (const [key, op] of allOperations()) {
    const hasKey = (op.parameters ?? []).some((p: Json) => p.$ref === idempotency.$ref);
    t.equal(hasKey, ASYNC_POSTS.includes(key), `${key} Idempotency-Key`);
  }
  for (const key of ASYNC_POSTS) {
    const op = operationOf(key)!;
    t.same(op.responses['202'].content['application/json'].schema, { $ref: '#/components/schemas/AsyncAccepted' }, key);
    t.ok(op.responses['200'], `${key} duplicate`);
    t.ok(op.requestBody.required, `${key} body`);
  }
  t.equal(doc.components.parameters.IdempotencyKey.in, 'header');
  t.equal(doc.components.parameters.IdempotencyKey.schema.maxLength, 255);
});

t.test('responses: Svc-Api-Version on each, errors as ErrorBody', async (t) => {
  const versionHeader = { $ref: '#/components/headers/SvcApiVersion' };
  for (const [key, op] of allOperations()) {
    for (const [status, response] of Object.entries(op.responses as Json)) {
      const resolved = response.$ref ? doc.components.responses[response.$ref.split('/').pop()] : response;
      t.same(resolved.headers['Svc-Api-Version'], versionHeader, `${key} ${status} header`);
      if (status === 'default' || Number(status) >= 400) {
        t.same(
          resolved.content['application/json'].schema,
          { $ref: '#/components/schemas/ErrorBody' },
          `${key} ${status} body`,
        );
      }
    }
  }
  t.same(doc.components.headers.SvcApiVersion.schema, { type: 'string', enum: ['1'] });
  t.ok(doc.components.responses.RateLimited.headers['Retry-After'], '429 carries Retry-After');
  t.same(Object.keys(operationOf('GET /{opcoId}/dossiers')!.responses), [
    '200',
    '400',
    '403',
    '404',
    '422',
    '429',
    '500',
    '501',
    '502',
    '503',
    '504',
    'default',
  ]);
  t.ok(operationOf('GET /metrics')!.responses['200'].content['text/plain']);
});

t.test('query schemas become query parameters', async (t) => {
  const params = operationOf('GET /{opcoId}/cfakeyinfo')!.parameters as Json[];
  t.same(params[0], { $ref: '#/components/parameters/OpcoId' });
  t.same(
    params.slice(1).map((p) => [p.name, p.in, p.required]),
    [
      ['siren', 'query', true],
      ['XAPIKEY', 'query', true],
    ],
  );
  t.same(params[1].schema, { type: 'string', minLength: 9 });
  const liste = (operationOf('GET /{opcoId}/dossiers/liste')!.parameters as Json[]).find(
    (p) => p.name === 'numerosInternes',
  );
  t.match(liste, { required: true, description: /at most 50/ });
  t.same(operationOf('GET /{opcoId}/jobs/{jobId}')!.parameters, [
    { $ref: '#/components/parameters/OpcoId' },
    { $ref: '#/components/parameters/JobId' },
  ]);
});

t.test(
  'route manifest: schema ids exist, router paths, lookup, a document of the mounted operations only',
  async (t) => {
    for (const id of operationIds) {
      const route: import('../src/index.js').OperationSpec = operations[id];
      for (const schema of [route.query, route.body, ...Object.values(route.responses).map((r) => r.schema)].filter(
        Boolean,
      ))
        t.ok(isSchemaId(schema!), `${id} ${schema}`);
    }
    t.equal(routerPath('/{opcoId}/jobs/{jobId}'), '/:opcoId/jobs/:jobId');
    t.equal(findOperation('POST', '/{opcoId}/factures'), 'postFacture');
    t.match(operations.postFacture, {
      body: 'facture-body',
      jobType: 'post-facture',
      profileRoute: 'POST /factures',
      async: true,
    });
    t.match(operations.postDocument, { body: 'document-body', jobType: 'post-document' });
    t.equal(findOperation('GET', '/nowhere'), undefined);
    t.ok(Object.isFrozen(buildOpenApi().paths), 'frozen, so no caller can alter a served document');
    const small = buildOpenApi(['getHealth', 'listDossierEtats']);
    t.same(Object.keys(small.paths).sort(), ['/health', '/{opcoId}/dossiers/etats']);
    t.same(
      small.tags.map((tag) => tag.name),
      ['system', 'dossiers'],
      'only the sections served',
    );
  },
);

t.test('each error response is described from the error table: its codes and when they are answered', async (t) => {
  const doc = buildOpenApi() as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }> }>>;
    components: { responses: Record<string, { description: string }> };
  };
  const checked = new Set<number>();
  for (const route of Object.values(operations)) {
    for (const status of route.errors) {
      if (checked.has(status)) continue;
      checked.add(status);
      const ref = doc.paths[route.path][route.method.toLowerCase()].responses[String(status)].$ref!;
      const { description } = doc.components.responses[ref.split('/').pop()!];
      const codes = Object.entries(ERROR_CODES).filter(
        ([, spec]) => !('upstreamStatus' in spec) && spec.status === status,
      );
      for (const [code, spec] of codes)
        t.ok(description.includes(`${code}: ${spec.when}`), `${status}: ${code} and its when`);
      if (codes.length === 0)
        t.match(description, new RegExp(`UPSTREAM_ERROR ${status}`), `${status}: the upstream's answer`);
    }
  }
  t.ok(checked.size >= 10, `${checked.size} error statuses`);
});
