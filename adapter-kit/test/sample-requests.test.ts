// The kit's own sample requests are requests the service accepts: each validates against the
// service's schema of its route (query or body), so a profile is tested on what clients send.
import t from 'tap';
import { validate } from '@opco-proxy/schemas';
import { ROUTE_KEYS } from '@opco-proxy/core';
import { SAMPLE_REQUESTS } from '../src/index.js';
import { requestSchemaOf } from '../src/service-schemas.js';

t.test("every route has samples, each valid by the service's schema", async (t) => {
  t.same(Object.keys(SAMPLE_REQUESTS).sort(), [...ROUTE_KEYS].sort(), 'one list per profile route');
  for (const [route, samples] of Object.entries(SAMPLE_REQUESTS)) {
    t.ok(samples.length > 0, route);
    const schema = requestSchemaOf(route as (typeof ROUTE_KEYS)[number]);
    for (const sample of samples) {
      if (!schema) {
        t.same(sample.query, {}, `${route} takes no parameter`);
        continue;
      }
      const result = validate(schema, route.startsWith('GET ') ? sample.query : sample.body);
      t.ok(result.valid, `${route} "${sample.name}": ${result.valid ? 'valid' : result.errors.join('; ')}`);
    }
  }
});
