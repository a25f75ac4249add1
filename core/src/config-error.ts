/** A configuration problem: start-up stops with its message (naming the key), never a stack trace. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
