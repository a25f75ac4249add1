/**
 * The one table of kernel misuse codes, in the manner of Fastify's lib/errors.js
 * (`createError(code, message)`): a plugin that adds an unknown hook, two plugins providing one
 * seam, a missing plugin dependency, an invalid configuration. Each throws with a stable `code`
 * a caller can test instead of matching its text; the message templates name their parameters,
 * `{like this}`, and the type checker asks for exactly those. docs/errors.md lists them (generated).
 *
 * `config` errors are ConfigErrors: start-up stops with their message and no stack trace (an
 * operator's mistake); the others are a plugin author's mistake and keep their stack.
 */
export const KERNEL_ERRORS = {
  OPCO_ERR_HOOK_UNKNOWN: {
    config: false,
    message: 'hook "{hook}" is not supported; known hooks: {known}',
    when: 'a plugin adds a hook the kernel does not run (hooks.ts lists them)',
  },
  OPCO_ERR_HOOK_NOT_FUNCTION: {
    config: false,
    message: 'hook "{hook}" handler must be a function',
    when: 'a plugin adds a hook handler that is not a function',
  },
  OPCO_ERR_HOOKS_FROZEN: {
    config: false,
    message: 'hook "{hook}" added after the kernel was ready: hooks are fixed at start-up',
    when: 'a hook is added once the kernel is ready',
  },
  OPCO_ERR_SEAM_TWO_PROVIDERS: {
    config: false,
    message: '{seam} has two providers: "{first}" from {firstBy} and "{second}" from {secondBy}; enable only one',
    when: 'two plugins provide one seam (admission): enable only one',
  },
  OPCO_ERR_SEAMS_FROZEN: {
    config: false,
    message: '{by} cannot provide {seam}: seams are fixed once the kernel is ready',
    when: 'a seam is provided once the kernel is ready',
  },
  OPCO_ERR_SEAM_UNPROVIDED: {
    config: false,
    message: 'nothing provides {seam}',
    when: 'the kernel reads a seam nothing provides (its default is missing)',
  },
  OPCO_ERR_ROUTES_FROZEN: {
    config: false,
    message: '{what} cannot be mounted by {owner}: routes are fixed once the kernel is ready',
    when: 'an operation or a shortcut is mounted once the kernel is ready',
  },
  OPCO_ERR_ROUTE_UNKNOWN: {
    config: false,
    message: '{owner} mounts an unknown operation "{operation}"',
    when: 'a plugin mounts an operation the route manifest does not have',
  },
  OPCO_ERR_ROUTE_TWICE: {
    config: false,
    message: 'operation {operation} is mounted twice: by {first} and by {second}',
    when: 'two owners mount one operation',
  },
  OPCO_ERR_ROUTE_SHORTCUT: {
    config: false,
    message: '{owner} cannot mount a shortcut for {operation}: only for a GET operation it serves',
    when: 'a shortcut for an operation that is not a GET its owner serves',
  },
  OPCO_ERR_METRIC_NAME: {
    config: false,
    message: 'plugin {plugin}: metric {metric} must be named opco_proxy_*',
    when: 'a plugin registers a metric not named `opco_proxy_*`',
  },
  OPCO_ERR_PROFILE_ROUTE_UNKNOWN: {
    config: false,
    message: 'profile {profile}: unknown route "{route}"',
    when: "an adapter's profile names a route the route manifest does not have",
  },
  OPCO_ERR_TRANSFORM_INVALID: {
    config: false,
    message: 'invalid {what}: {problem}',
    when: "an adapter's transform names an empty path segment, renames a wildcard or defaults one",
  },
  OPCO_ERR_AUTH_HEADER_RESERVED: {
    config: false,
    message: 'apiKeyHeader: X-API-KEY carries the CFA key (SPEC 1.1); choose another header',
    when: "an adapter sends its upstream key in X-API-KEY, the header of the tenant's key",
  },
  OPCO_ERR_PLUGIN_INVALID: {
    config: true,
    message: 'invalid configuration: plugins[{index}]: "{name}" is not a plugin',
    when: 'a package named in `plugins` exports no plugin',
  },
  OPCO_ERR_PLUGIN_API_UNSUPPORTED: {
    config: true,
    message:
      'invalid configuration: plugins[{index}]: plugin "{package}" targets plugin API {target}; this service supports plugin API {supported}',
    when: 'a plugin package is written for a plugin API this service does not run: install a version of it for this service, or a service for it',
  },
  OPCO_ERR_PROFILE_FORMAT_UNSUPPORTED: {
    config: true,
    message:
      'invalid configuration: {key}: adapter "{package}" targets profile format {target}; this service supports profile format {supported}',
    when: 'an adapter package is written for a profile format this service does not read: install a version of it for this service, or a service for it',
  },
  OPCO_ERR_PROFILE_INVALID: {
    config: true,
    message: 'invalid configuration: {key}: the profile of adapter "{package}": {problems}',
    when: "an adapter's profile leaves out a required key or gives a key of the wrong type (a block that is not an object, routes that are a list...)",
  },
  OPCO_ERR_PLUGIN_DEPENDENCY_MISSING: {
    config: true,
    message: 'invalid configuration: plugins: "{plugin}" needs plugin "{dependency}"',
    when: 'an enabled plugin needs a plugin that is not enabled',
  },
  OPCO_ERR_PLUGIN_DEPENDENCY_CYCLE: {
    config: true,
    message: 'invalid configuration: plugins: dependency cycle through "{plugin}"',
    when: 'plugins that need each other',
  },
  OPCO_ERR_PACKAGE_MISSING: {
    config: true,
    message: 'invalid configuration: {key}: {kind} package "{package}" is not installed (looked in {places})',
    when: 'an adapter or plugin package named in the configuration is not installed',
  },
  OPCO_ERR_STORE_DATAFILE_CORRUPT: {
    config: true,
    message: '{file}: {corrupt} of {lines} lines are unreadable; refusing to open it rather than lose data',
    when: "an embedded store's datafile has more unreadable lines than a crash leaves (a tenth of the file): restore it from a backup",
  },
  OPCO_ERR_QUEUE_DECLARATION_REFUSED: {
    config: true,
    message:
      'RabbitMQ refused to declare queue {queue}: {reason}; a queue of that name exists with other arguments (another queue type, or made by something else): delete it, or set another queue.prefix',
    when: 'the RabbitMQ driver declares a queue that exists on the broker with other arguments, for example a classic queue where `queue.replicated` wants a quorum queue (docs/decisions.md P17)',
  },
  OPCO_ERR_CONFIG_FILE: {
    config: true,
    message: 'config file {path} {problem}',
    when: 'the config file cannot be read or is not JSON',
  },
  // The shape of most configuration messages; their callers (config.ts, config-layers.ts, the
  // adapters' setup...) build the key and the problem themselves: new ConfigError(message).
  OPCO_ERR_CONFIG_INVALID: {
    config: true,
    message: 'invalid configuration: {key}: {problem}',
    when: 'any other invalid configuration: a key the schema refuses, a missing secret, a bad environment variable',
  },
} as const satisfies Record<`OPCO_ERR_${string}`, { config: boolean; message: string; when: string }>;

export type KernelErrorCode = keyof typeof KERNEL_ERRORS;

/** The names between braces of a template: `'{seam} has {n}'` gives `'seam' | 'n'`. */
type Placeholders<S extends string> = S extends `${string}{${infer Name}}${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;

export type KernelErrorParams<C extends KernelErrorCode> = Record<
  Placeholders<(typeof KERNEL_ERRORS)[C]['message']>,
  string | number
>;

/** A misuse of the kernel, with its stable code. */
export class KernelError extends Error {
  readonly code: KernelErrorCode;

  constructor(code: KernelErrorCode, message: string) {
    super(message);
    this.name = 'KernelError';
    this.code = code;
  }
}

/** A configuration problem: start-up stops with its message (naming the key), never a stack trace. */
export class ConfigError extends KernelError {
  constructor(message: string, code: KernelErrorCode = 'OPCO_ERR_CONFIG_INVALID') {
    super(code, message);
    this.name = 'ConfigError';
  }
}

/** The message of a code with its parameters in place. */
export function kernelErrorMessage<C extends KernelErrorCode>(code: C, params: KernelErrorParams<C>): string {
  return KERNEL_ERRORS[code].message.replace(/\{(\w+)\}/g, (_, name: string) =>
    String((params as Record<string, unknown>)[name]),
  );
}

/** The error of a code: a ConfigError for a configuration problem, a KernelError otherwise. */
export function kernelError<C extends KernelErrorCode>(code: C, params: KernelErrorParams<C>): KernelError {
  const message = kernelErrorMessage(code, params);
  return KERNEL_ERRORS[code].config ? new ConfigError(message, code) : new KernelError(code, message);
}

export function isKernelError(err: unknown, code?: KernelErrorCode): err is KernelError {
  return err instanceof KernelError && (code === undefined || err.code === code);
}
