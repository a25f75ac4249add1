// The table of kernel misuse codes (kernel-errors.ts): stable, distinct codes and messages, each
// documented, templates filled in, configuration problems as ConfigErrors.
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  ERROR_CODES,
  KERNEL_ERRORS,
  KernelError,
  apiKeyHeader,
  defineProfile,
  isKernelError,
  kernelError,
  rename,
  type KernelErrorCode,
} from '../src/application.js';

const codes = Object.keys(KERNEL_ERRORS) as KernelErrorCode[];

t.test('codes are OPCO_ERR_*, distinct from the HTTP codes, with distinct messages and a when', async (t) => {
  t.ok(codes.length >= 10, `${codes.length} codes`);
  for (const code of codes) {
    t.match(code, /^OPCO_ERR_[A-Z_]+$/, code);
    t.notOk(Object.hasOwn(ERROR_CODES, code), `${code} is not an HTTP code`);
    t.ok(KERNEL_ERRORS[code].when.length > 10, `${code}: when`);
  }
  const messages = codes.map((code) => KERNEL_ERRORS[code].message);
  t.equal(new Set(messages).size, messages.length, 'no two codes share a message');
});

t.test('a template is filled with its parameters; a configuration code is a ConfigError', async (t) => {
  const missing = kernelError('OPCO_ERR_PLUGIN_DEPENDENCY_MISSING', { plugin: 'sync', dependency: 'jobs' });
  t.ok(missing instanceof ConfigError, 'ConfigError: printed without a stack');
  t.equal(missing.code, 'OPCO_ERR_PLUGIN_DEPENDENCY_MISSING');
  t.equal(missing.message, 'invalid configuration: plugins: "sync" needs plugin "jobs"');
  const unknown = kernelError('OPCO_ERR_HOOK_UNKNOWN', { hook: 'onRequest', known: 'lookup, peek' });
  t.ok(unknown instanceof KernelError);
  t.notOk(unknown instanceof ConfigError, "a plugin author's mistake keeps its stack");
  t.equal(unknown.message, 'hook "onRequest" is not supported; known hooks: lookup, peek');
  t.ok(isKernelError(unknown, 'OPCO_ERR_HOOK_UNKNOWN'));
  t.notOk(isKernelError(unknown, 'OPCO_ERR_HOOKS_FROZEN'));
  t.notOk(isKernelError(new Error('x')));
});

t.test('a ConfigError built by hand keeps its text and has the generic configuration code', async (t) => {
  const error = new ConfigError('invalid configuration: jobs.leaseMs: must be >= 1000');
  t.equal(error.message, 'invalid configuration: jobs.leaseMs: must be >= 1000');
  t.equal(error.code, 'OPCO_ERR_CONFIG_INVALID');
  t.equal(error.name, 'ConfigError');
});

t.test("an adapter's misuse is coded too: unknown route, bad transform, the tenant's header", async (t) => {
  t.throws(() => defineProfile({ id: 'acme', routes: { 'GET /nowhere': {} } } as never), {
    code: 'OPCO_ERR_PROFILE_ROUTE_UNKNOWN',
    message: 'profile acme: unknown route "GET /nowhere"',
  });
  t.throws(() => rename({ 'a.*': 'b' }), {
    code: 'OPCO_ERR_TRANSFORM_INVALID',
    message: 'invalid rename "a.*" -> "b": rename one named field to a plain name',
  });
  t.throws(() => rename({ 'a..b': 'c' }), {
    code: 'OPCO_ERR_TRANSFORM_INVALID',
    message: 'invalid transform path "a..b": empty segment',
  });
  t.throws(() => apiKeyHeader({ header: 'X-Api-Key' }), { code: 'OPCO_ERR_AUTH_HEADER_RESERVED' });
});

t.test('core throws plain Errors only for states no caller can reach; misuse throws a code', async (t) => {
  // The two guards left: the master key is checked by config.ts before it is parsed, and every
  // configured opco gets its authentication before the first call.
  const allowed = new Set(['crypto/crypto.ts', 'pipeline/upstream-client.ts']);
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const plain = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.startsWith('testing') && !file.includes('-contract.'))
    .filter((file) => readFileSync(join(src, file), 'utf8').includes('throw new Error('));
  t.same(plain.filter((file) => allowed.has(file)).sort(), [...allowed].sort(), 'the scan sees the guards');
  t.same(plain.filter((file) => !allowed.has(file)).sort(), [], 'no other plain throw in core/src');
});
