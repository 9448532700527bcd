import { type Logger, pino } from 'pino';
import { activeSpanIds } from './telemetry/trace-context.js';

export type { Logger };

/** Paths never written to logs: credentials, secrets and the internal principal assertion. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-sd-principal"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  'token',
  'secret',
  'key',
  'access_token',
  'refresh_token',
  'client_secret',
  'code_verifier',
  '*.password',
  '*.token',
  '*.secret',
  '*.key',
  '*.apiKey',
  '*.access_token',
  '*.refresh_token',
  '*.client_secret',
  '*.authorization',
];

export interface LoggerOptions {
  service: string;
  level?: string;
  destination?: pino.DestinationStream;
}

export function createLogger({ service, level = 'info', destination }: LoggerOptions): Logger {
  return pino(
    {
      level,
      base: { service },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Every line written inside a trace names it and the span it was written in, so a log
      // search finds the trace (and the very span) and back.
      mixin: () => activeSpanIds() ?? {},
    },
    destination,
  );
}
