/**
 * The examples of /doc: each one is valid against its own schema through the service's own
 * validation (validate, the ajv instance that checks requests), and every operation shows a
 * request example when it takes a body and an answer example for each success status; the
 * webhook notifications are documented as callbacks of POST /webhooks, one per event type.
 */
import t from 'tap';
import {
  buildOpenApi,
  errorExamples,
  loadSchema,
  notificationExamples,
  notificationHeaderExamples,
  operationExamples,
  operationIds,
  operations,
  otherErrorExample,
  validate,
  type EventType,
  type OperationSpec,
} from '../src/index.js';

type Json = Record<string, any>;
const doc = buildOpenApi() as unknown as Json;
const EVENTS = loadSchema('event-type').enum as EventType[];

t.test('every request and answer example validates against the schema the manifest names for it', async (t) => {
  for (const id of operationIds) {
    const route: OperationSpec = operations[id];
    const example = operationExamples[id] as { request?: unknown; responses: Record<string, unknown> };
    if (route.body) t.same(validate(route.body, example.request), { valid: true }, `${id} request`);
    else t.equal(example.request, undefined, `${id} takes no body`);
    t.same(
      Object.keys(example.responses).sort(),
      Object.keys(route.responses).sort(),
      `${id}: one example per success status`,
    );
    for (const [status, response] of Object.entries(route.responses)) {
      const answer = example.responses[status];
      if (response.schema) t.same(validate(response.schema, answer), { valid: true }, `${id} ${status}`);
      else t.ok(answer !== undefined && answer !== '', `${id} ${status} has an example though it has no schema`);
    }
  }
});

t.test('a broken example is caught: the check can fail', async (t) => {
  const bad = structuredClone(operationExamples.postFacture.request) as Json;
  bad.lignes[0].natureLigne = 'CANTINE';
  const result = validate('facture-body', bad);
  t.equal(result.valid, false);
  t.match(result, { errors: [/lignes\.0\.natureLigne: Invalid enum value/] });
});

t.test('error examples: one per documented error status, each an ErrorBody', async (t) => {
  for (const [status, body] of Object.entries(errorExamples))
    t.same(validate('error-body', body), { valid: true }, status);
  t.same(validate('error-body', otherErrorExample), { valid: true }, 'default');
  for (const [name, response] of Object.entries(doc.components.responses as Json)) {
    t.ok(response.content['application/json'].example, `${name} has an example`);
  }
});

t.test(
  'every operation in /doc has a request example when it has a body and an answer example for its success statuses',
  async (t) => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        const key = `${method.toUpperCase()} ${path}`;
        if (op.requestBody) {
          for (const [type, media] of Object.entries(op.requestBody.content as Json))
            t.ok(media.example, `${key} request ${type}`);
        }
        const successes = Object.entries(op.responses as Json).filter(([status]) => /^2\d\d$/.test(status));
        t.ok(successes.length > 0, `${key} has a success status`);
        for (const [status, response] of successes) {
          for (const [type, media] of Object.entries(response.content as Json)) {
            t.not(media.example, undefined, `${key} ${status} ${type}`);
            checked += 1;
          }
        }
      }
    }
    t.ok(checked >= operationIds.length, `${checked} answer examples`);
  },
);

t.test('notifications: one callback per event type on POST /webhooks, with the signed headers', async (t) => {
  const callbacks = doc.paths['/webhooks'].post.callbacks as Json;
  t.same(Object.keys(callbacks).sort(), [...EVENTS].sort());
  for (const event of EVENTS) {
    const post = callbacks[event]['{$request.body#/callbackUrl}'].post;
    const body = post.requestBody.content['application/json'];
    t.same(body.schema, { $ref: '#/components/schemas/WebhookNotification' }, event);
    t.equal(body.example.event, event);
    t.same(validate('webhook-notification', body.example), { valid: true }, `${event} example`);
    const headers: Record<string, Json> = Object.fromEntries((post.parameters as Json[]).map((p) => [p.name, p]));
    for (const name of [
      'Svc-Signature',
      'Svc-Event',
      'Svc-Delivery-Id',
      'Svc-Timestamp',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]) {
      t.match(headers[name], { in: 'header', required: true }, `${event} ${name}`);
    }
    t.same(headers['Svc-Event'].schema.enum, [event]);
    for (const h of Object.values(headers)) {
      if (h.schema.pattern)
        t.match(h.example, new RegExp(h.schema.pattern), `${event} ${h.name} example matches its pattern`);
    }
    t.equal(headers['webhook-id'].example, headers['Svc-Delivery-Id'].example);
    t.ok(post.responses['2XX'], `${event} answer`);
  }
  t.equal(notificationExamples['webhook.test'].opcoId, '', 'webhook events concern no upstream body');
  t.same(
    notificationHeaderExamples('job.completed').map((h) => h.name),
    [
      'Svc-Event',
      'Svc-Signature',
      'Svc-Signature-Previous',
      'Svc-Delivery-Id',
      'Svc-Timestamp',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ],
  );
});

t.test('no callbacks when the webhooks operations are not mounted', async (t) => {
  const small = buildOpenApi(['getHealth', 'getOpenApi', 'getReferencePage']) as unknown as Json;
  t.same(Object.keys(small.paths).sort(), ['/doc', '/docs', '/health']);
  t.notOk(JSON.stringify(small.paths).includes('callbacks'));
});
