/** ConfigError lives with the other kernel errors (kernel-errors.ts); cli.ts still imports it from here. */
export { ConfigError } from './kernel-errors.js';
