/**
 * Upstream authentication (SPEC 1.1, 5.2) as a strategy of the profile: each OPCO's API has its
 * own scheme, so the profile declares it (data first: OAuth client credentials in its variants,
 * a static API-key header) or brings its own code. A strategy reads and checks its own keys of
 * the opco's config entry and its secrets from the environment, then gives the upstream client
 * the headers of each call and says whether a 401 deserves a refresh and one retry (D10).
 */
import { ConfigError } from '../config/config.js';
import type { Clock } from '../clock.js';

/** What a strategy is given for one opcoId, at start-up. */
export interface AuthSetup {
  opcoId: string;
  /** The adapter's name, for messages. */
  adapter: string;
  /** The opco's config entry: the strategy reads its own keys (tokenUrl, apiKeyEnv, ...). */
  entry: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  clock: Clock;
  /** Time limit of a token request (upstream.timeoutMs). */
  timeoutMs: number;
  /** The upstream client's transport, so token requests go out like every other call. */
  send: AuthTransport;
}

/**
 * Sends a token request; rejects with an error whose `code` is TIMEOUT, NETWORK, or TOO_LARGE (the
 * answer passed the client's `maxAnswerBytes`).
 */
export type AuthTransport = (request: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}) => Promise<{ status: number; text: string }>;

export interface UpstreamAuth {
  /** Headers of the next call (a bearer token, an API key). Never logged, stored or returned. */
  headers(): Promise<Record<string, string>>;
  /** The upstream answered 401 to a call sent with `used`: true when fresh headers deserve one retry. */
  refused(used: Record<string, string>): boolean;
}

export interface AuthStrategy {
  /** Named in errors and docs (`oauth-client-credentials`, `api-key-header`). */
  readonly kind: string;
  /** Config keys of an opco entry this strategy reads, so the config schema can accept them. */
  readonly configKeys: readonly string[];
  /** Checks the opco's keys and secrets (a ConfigError naming the bad one) and returns its auth. */
  setup(setup: AuthSetup): UpstreamAuth;
}

/** A string config key of the opco entry, required unless `optional`. */
export function entryString(setup: AuthSetup, key: string, kind: string, optional = false): string | undefined {
  const value = setup.entry[key];
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || value === '') {
    throw new ConfigError(
      `invalid configuration: opcos.${setup.opcoId}.${key}: required by the ${kind} authentication of adapter ${setup.adapter}`,
    );
  }
  return value;
}

/** The secret in the environment variable named by the opco's `key` (`clientSecretEnv`, `apiKeyEnv`). */
export function entrySecret(setup: AuthSetup, key: string, kind: string): string {
  const variable = entryString(setup, key, kind)!;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
    throw new ConfigError(
      `invalid configuration: opcos.${setup.opcoId}.${key}: "${variable}" is not an environment variable name`,
    );
  const secret = setup.env[variable];
  if (!secret)
    throw new ConfigError(
      `invalid configuration: opcos.${setup.opcoId}.${key}: environment variable ${variable} is not set`,
    );
  return secret;
}
