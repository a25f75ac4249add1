// Async jobs end to end on MongoDB (FerretDB in CI) and RabbitMQ.
import t from 'tap';
import { filesSuite, jobsSuite, realBackends, realBackendsSkip } from '../src/index.js';

const skip = realBackendsSkip();
if (skip) t.test('jobs on MongoDB and RabbitMQ', { skip }, async () => {});
else {
  jobsSuite(t, () => ({ config: realBackends('jobs') }));
  t.test('files', async (t) => filesSuite(t, () => ({ config: realBackends('jobs-files') })));
}
