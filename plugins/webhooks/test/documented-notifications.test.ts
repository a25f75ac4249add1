// The notifications /doc documents (callbacks of POST /webhooks) are the ones delivery sends: for
// the documented body, secret, delivery id and time, notificationHeaders() gives every documented
// header its documented value, and the Standard Webhooks library signs them alike.
import t from 'tap';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { EXAMPLE_SECRET, EXAMPLE_SIGNING_SECRET, buildOpenApi, loadSchema, type EventType } from '@opco-proxy/schemas';
import { notificationHeaders, signingSecret } from '../src/signature.js';

type Json = Record<string, any>;
const callbacks = (buildOpenApi() as unknown as Json).paths['/webhooks'].post.callbacks as Json;
const PREVIOUS_SECRET = 'e4'.repeat(32);

t.test('the example secret in its Standard Webhooks form', async (t) => {
  t.equal(signingSecret(EXAMPLE_SECRET), EXAMPLE_SIGNING_SECRET);
});

for (const event of loadSchema('event-type').enum as EventType[]) {
  t.test(`${event}: the documented headers are what delivery sends`, async (t) => {
    const post = callbacks[event]['{$request.body#/callbackUrl}'].post;
    const rawBody = JSON.stringify(post.requestBody.content['application/json'].example);
    const documented: Record<string, string> = Object.fromEntries(
      (post.parameters as Json[]).map((p) => [p.name, p.example]),
    );
    const sentAt = new Date(documented['Svc-Timestamp']);
    const deliveryId = documented['webhook-id'];
    const sent = notificationHeaders({ current: EXAMPLE_SECRET }, rawBody, event, deliveryId, sentAt);
    const duringRotation = notificationHeaders(
      { current: EXAMPLE_SECRET, previous: PREVIOUS_SECRET },
      rawBody,
      event,
      deliveryId,
      sentAt,
    );
    for (const [name, example] of Object.entries(documented)) {
      const actual =
        name === 'Svc-Signature-Previous' ? duringRotation['svc-signature-previous'] : sent[name.toLowerCase()];
      t.equal(example, actual, name);
    }
    t.same(
      Object.keys(sent)
        .filter((name) => !['content-type', 'user-agent'].includes(name))
        .sort(),
      Object.keys(documented)
        .filter((name) => name !== 'Svc-Signature-Previous')
        .map((name) => name.toLowerCase())
        .sort(),
      'every header sent is documented',
    );
    const standard = new StandardWebhook(EXAMPLE_SIGNING_SECRET);
    t.equal(
      documented['webhook-signature'],
      standard.sign(deliveryId, sentAt, rawBody),
      'the Standard Webhooks library signs alike',
    );
  });
}
