import {
  baseConfig,
  configSchema,
  loadConfig,
  overloadConfig,
  principalConfig,
} from '@support-desk/platform/core';
import { metricsConfig } from '@support-desk/platform/metrics';
import { type Static, Type } from 'typebox';

const Ms = (def: number, minimum = 1, maximum = 86_400_000) =>
  Type.Integer({ minimum, maximum, default: def });

/** Every variable the webhooks service reads (documented with defaults in README.md). */
const webhooksConfigSchema = configSchema({
  ...baseConfig,
  ...metricsConfig(9484),
  ...principalConfig,
  ...overloadConfig,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8084 }),
  /** Takes precedence over PORT so one environment file can hold every service's port. */
  WEBHOOKS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  MONGO_DB: Type.String({ minLength: 1, default: 'webhooks' }),
  WEBHOOKS_DURABLE: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'webhooks' }),
  /**
   * The key (32 bytes, base64) signing secrets are encrypted with at rest (AES-256-GCM). No
   * default: `npm start`, the tests and the deployments each provide one. Changing it makes the
   * stored secrets unreadable (rotate every subscription's secret after).
   */
  WEBHOOKS_SECRET_KEY: Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' }),
  /**
   * Comma-separated retry delays after each failed attempt (ms), each with ±20% jitter; a delivery
   * that fails them all is `failed`. The default: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (8
   * attempts over about 27 hours).
   */
  WEBHOOKS_RETRY_SCHEDULE_MS: Type.String({
    pattern: '^\\d{1,9}(,\\d{1,9}){0,19}$',
    default: '5000,300000,1800000,7200000,18000000,36000000,36000000',
  }),
  /** A subscription failing without a success for this long, over at least … */
  WEBHOOKS_DISABLE_AFTER_MS: Ms(5 * 86_400_000, 0, 30 * 86_400_000),
  /** … this many failed attempts in a row, is disabled (`disabledReason: failing`). */
  WEBHOOKS_DISABLE_AFTER_FAILURES: Type.Integer({ minimum: 1, maximum: 100_000, default: 20 }),
  /** How long the previous secret keeps signing beside the new one after a rotation. */
  WEBHOOKS_ROTATION_OVERLAP_MS: Ms(86_400_000, 0, 30 * 86_400_000),
  WEBHOOKS_CONNECT_TIMEOUT_MS: Ms(5_000, 1, 60_000),
  /** The whole answer (headers and the body read up to the cap) must come within this. */
  WEBHOOKS_RESPONSE_TIMEOUT_MS: Ms(15_000, 1, 120_000),
  /** The most of a receiver's answer body read (and kept in the log, as text). */
  WEBHOOKS_RESPONSE_BODY_CAP_BYTES: Type.Integer({ minimum: 0, maximum: 65_536, default: 1024 }),
  /**
   * CIDR ranges allowed although they are private, loopback, link-local or metadata ranges
   * (comma-separated, e.g. `127.0.0.0/8,::1/128` for local development and the tests). Empty:
   * only public destinations.
   */
  WEBHOOKS_ALLOWED_RANGES: Type.String({ default: '' }),
  /**
   * Plain `http://` subscription URLs to any host. Off: https only, except a loopback receiver
   * (127.0.0.0/8, ::1, localhost) that WEBHOOKS_ALLOWED_RANGES admits (local development).
   */
  WEBHOOKS_ALLOW_HTTP: Type.Boolean({ default: false }),
  /**
   * How soon the delivery worker looks again at a lane that could not go on (behind the intake,
   * claimed by another replica, a store error). Not a poll: an idle worker makes no store calls.
   */
  WEBHOOKS_POLL_MS: Ms(500, 10, 60_000),
  /**
   * The worker's safety sweep: it reads the due deliveries at least this often, for what no
   * wake-up announces (a retry left by a replica that died). Every other pass is woken.
   */
  WEBHOOKS_SWEEP_MS: Ms(60_000, 100, 3_600_000),
  /** Deliveries attempted at once by one replica (each on its own resource lane). */
  WEBHOOKS_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1024, default: 32 }),
  /** A replica's claim on a lane expires after this (a killed replica's claim with it). */
  WEBHOOKS_LEASE_MS: Ms(60_000, 1_000, 600_000),
  /**
   * How long the delivery worker uses a subscription it read for the attempts after it (every
   * lane's) at most; a change made here drops the copy at once, one made by another replica on its
   * change notice (`system.config_changed`). 0: read before every attempt.
   */
  WEBHOOKS_SUBSCRIPTION_CACHE_MS: Ms(5_000, 0, 600_000),
  /** Days a finished delivery (succeeded or failed) stays in the log; fractions allowed; 0 = forever. */
  WEBHOOKS_RETENTION_DAYS: Type.Number({ minimum: 0, maximum: 36_500, default: 30 }),
  WEBHOOKS_RETENTION_SWEEP_MS: Ms(600_000, 100, 86_400_000),
  WEBHOOKS_MAX_DELIVER: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  /**
   * How long the backlog gauges' store read is reused across scrapes (pending deliveries, oldest
   * pending age, disabled subscriptions); 0: read at every scrape.
   */
  WEBHOOKS_METRICS_CACHE_MS: Ms(10_000, 0, 600_000),
});

export type WebhooksConfig = Static<typeof webhooksConfigSchema>;

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env): WebhooksConfig {
  return loadConfig(webhooksConfigSchema, env);
}

export const listenPort = (config: WebhooksConfig) => config.WEBHOOKS_PORT ?? config.PORT;

export const retrySchedule = (config: WebhooksConfig) =>
  config.WEBHOOKS_RETRY_SCHEDULE_MS.split(',').map(Number);
