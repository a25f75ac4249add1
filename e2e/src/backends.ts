/** The real backends of CI: MongoDB (FerretDB) and RabbitMQ, named by the environment. */
import { randomBytes } from 'node:crypto';
import type { Config } from '@opco-proxy/core/application';

export function realBackendsSkip(): string | false {
  if (process.env.MONGODB_URL && process.env.RABBITMQ_URL) return false;
  if (process.env.REQUIRE_MONGODB === '1' || process.env.REQUIRE_RABBITMQ === '1') {
    throw new Error('MONGODB_URL and RABBITMQ_URL are required (REQUIRE_MONGODB / REQUIRE_RABBITMQ is set)');
  }
  return 'needs MONGODB_URL and RABBITMQ_URL (see .ci/run)';
}

/** A fresh database and queue prefix, so parallel test files never share state on one server. */
export function realBackends(label: string): Pick<Config, 'store' | 'queue'> {
  const id = `${label}_${Date.now()}_${randomBytes(3).toString('hex')}`;
  return {
    store: { type: 'mongodb', url: process.env.MONGODB_URL!, database: id },
    queue: { type: 'rabbitmq', url: process.env.RABBITMQ_URL!, prefix: id },
  };
}
