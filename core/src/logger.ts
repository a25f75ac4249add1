/**
 * Structured logs (SPEC 5.5): pino, with API keys masked and bearer tokens and personal
 * data (names, birth dates, IBANs) censored wherever they appear in a logged object.
 */
import { pino, type DestinationStream, type Logger } from 'pino';
import { maskApiKey } from './tenant.js';

export type { Logger };

const SECRET_PATHS = [
  'apiKey', '*.apiKey', 'headers["x-api-key"]', '*.headers["x-api-key"]',
  'headers.authorization', '*.headers.authorization', 'authorization', '*.authorization',
  'accessToken', '*.accessToken', 'clientSecret', '*.clientSecret', 'secret', '*.secret',
];
const PERSONAL_PATHS = ['*.nom', '*.prenom', '*.nomUsage', '*.dateNaissance', '*.IBAN', '*.ibanEmetteur', 'body', '*.body'];

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: { service: 'opco-proxy' },
      redact: {
        paths: [...SECRET_PATHS, ...PERSONAL_PATHS],
        censor: (value: unknown, path: string[]) => {
          const last = path[path.length - 1];
          if (last === 'x-api-key' || last === 'apiKey') return typeof value === 'string' ? maskApiKey(value) : '[masked]';
          return '[redacted]';
        },
      },
    },
    (options.destination ?? process.stdout) as DestinationStream,
  );
}
