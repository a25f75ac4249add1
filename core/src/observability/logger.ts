/**
 * Structured logs (SPEC 5.5): pino, with API keys masked and bearer tokens and personal
 * data (names, birth dates, IBANs) censored wherever they appear in a logged object.
 */
import { destination as pinoDestination, pino, type DestinationStream, type Logger } from 'pino';
import { maskApiKey } from '../http/tenant.js';

export type { Logger };

const SECRET_PATHS = [
  'apiKey',
  '*.apiKey',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  '*.authorization',
  'accessToken',
  '*.accessToken',
  'clientSecret',
  '*.clientSecret',
  'secret',
  '*.secret',
];
const PERSONAL_PATHS = [
  '*.nom',
  '*.prenom',
  '*.nomUsage',
  '*.dateNaissance',
  '*.IBAN',
  '*.ibanEmetteur',
  'body',
  '*.body',
];

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service: 'opco-proxy' },
      redact: {
        paths: [...SECRET_PATHS, ...PERSONAL_PATHS],
        censor: (value: unknown, path: string[]) => {
          const last = path[path.length - 1];
          if (last === 'x-api-key' || last === 'apiKey')
            return typeof value === 'string' ? maskApiKey(value) : '[masked]';
          return '[redacted]';
        },
      },
    },
    (options.destination ?? process.stdout) as DestinationStream,
  );
}

/** Lines held before a write, and how long one may wait at most. */
const BATCH_BYTES = 4096;
const BATCH_MS = 250;

export interface BatchedLogger {
  log: Logger;
  /** Writes what is held, at once (the kernel's close; the process's exit does it too). */
  flush(): void;
}

/**
 * The access lines' logger (one line per request, most of what the service writes): on standard
 * output in batches of up to 4 KiB, written at least every 250 ms and at exit, rather than one
 * write each (a tenth of a cached read's CPU). Every other line stays synchronous, so an error is
 * out when it is logged; a process killed with SIGKILL loses at most 250 ms of access lines.
 */
export function createBatchedLogger(options: { level?: string } = {}): BatchedLogger {
  const destination = pinoDestination({ dest: 1, sync: true, minLength: BATCH_BYTES, periodicFlush: BATCH_MS });
  const flush = () => {
    if (!(destination as unknown as { destroyed: boolean }).destroyed) destination.flushSync();
  };
  process.once('exit', flush);
  const log = pino(
    { level: options.level ?? process.env.LOG_LEVEL ?? 'info', base: { service: 'opco-proxy' } },
    destination,
  );
  return {
    log,
    flush() {
      flush();
      process.removeListener('exit', flush);
      destination.end();
    },
  };
}
