// Audit records (D32) on MongoDB (FerretDB in CI) and RabbitMQ.
import t from 'tap';
import { auditSuite, realBackends, realBackendsSkip } from '../src/index.js';

const skip = realBackendsSkip();
if (skip) t.test('audit records on MongoDB and RabbitMQ', { skip }, async () => {});
else auditSuite(t, () => realBackends('audit'));
