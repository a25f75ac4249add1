// Issue 27 on MongoDB (FerretDB in CI) and RabbitMQ: the store budget's slice shared through the database.
import t from 'tap';
import { edgeAttackSuite, realBackends, realBackendsSkip } from '../src/index.js';

const skip = realBackendsSkip();
if (skip) t.test('the edge attacks on MongoDB and RabbitMQ', { skip }, async () => {});
else edgeAttackSuite(t, 'mongodb+rabbitmq', () => realBackends('edge'));
