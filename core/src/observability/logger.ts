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
  // sonic-boom writes each string it is given at once (minLength 0); the batch is LineBatch's.
  const destination = pinoDestination({ dest: 1, sync: true });
  const closed = () => (destination as unknown as { destroyed: boolean }).destroyed;
  const batch = new LineBatch((text) => closed() || destination.write(text));
  const flush = () => {
    if (closed()) return;
    batch.flush();
    destination.flushSync();
  };
  process.once('exit', flush);
  const log = pino({ level: options.level ?? process.env.LOG_LEVEL ?? 'info', base: { service: 'opco-proxy' } }, batch);
  return {
    log,
    flush() {
      flush();
      batch.stop();
      process.removeListener('exit', flush);
      destination.end();
    },
  };
}

/**
 * Lines held as a list and handed on joined, one string per batch. sonic-boom's own batching
 * (`minLength`) appends each line to the string it holds and then measures that string's bytes,
 * which flattens it: a copy of up to 4 KiB per line, half of what an access line cost
 * (bench/RESULTS.md, issue 40).
 */
export class LineBatch {
  private lines: string[] = [];
  /** Characters held: the lines are ASCII but for a rare name, so about their bytes. */
  private chars = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly out: (text: string) => unknown,
    private readonly maxChars = BATCH_BYTES,
  ) {
    this.timer = setInterval(() => this.flush(), BATCH_MS).unref();
  }

  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.maxChars) this.flush();
    return true;
  }

  /** Writes what is held; `done` as pino's `logger.flush(cb)` passes it. */
  flush(done?: () => void): void {
    if (this.lines.length > 0) {
      const text = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
      this.lines = [];
      this.chars = 0;
      this.out(text);
    }
    done?.();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
