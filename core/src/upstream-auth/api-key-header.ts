/**
 * A static API key sent in a header of every call, as some upstreams authenticate publishers.
 * The key comes from the environment variable named by the opco's `apiKeyEnv`. There is nothing
 * to refresh, so a 401 is not retried.
 */
import { entrySecret, type AuthStrategy } from './auth-strategy.js';
import { kernelError } from '../errors/kernel-errors.js';

export interface ApiKeyHeaderOptions {
  /** Header name, e.g. `X-Gateway-Key`. Must not be X-API-KEY, which carries the CFA's key (SPEC 1.1). */
  header: string;
  /** Written before the key, e.g. `ApiKey ` for `Authorization: ApiKey <key>`. */
  prefix?: string;
}

const KIND = 'api-key-header';

export function apiKeyHeader(options: ApiKeyHeaderOptions): AuthStrategy {
  const header = options.header.toLowerCase();
  if (header === 'x-api-key') throw kernelError('OPCO_ERR_AUTH_HEADER_RESERVED', {});
  return {
    kind: KIND,
    configKeys: ['apiKeyEnv'],
    setup(setup) {
      const key = entrySecret(setup, 'apiKeyEnv', KIND);
      const value = `${options.prefix ?? ''}${key}`;
      return {
        headers: async () => ({ [header]: value }),
        refused: () => false,
      };
    },
  };
}
