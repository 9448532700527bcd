import { Type } from '@sinclair/typebox';
import {
  baseConfig,
  configSchema,
  loadConfig,
  overloadConfig,
  principalConfig,
} from '@support-desk/platform/core';
import { metricsConfig } from '@support-desk/platform/metrics';
import type { Static } from '@sinclair/typebox';

export const requestsConfigSchema = configSchema({
  ...baseConfig,
  ...metricsConfig(9481),
  ...principalConfig,
  ...overloadConfig,
  /** Takes precedence over PORT so one environment file can configure every service. */
  REQUESTS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8081 }),
  MONGO_DB: Type.String({ minLength: 1, default: 'requests' }),
  PUBLIC_BASE_URL: Type.String({ pattern: '^https?://', default: 'http://127.0.0.1:8080/v1' }),
  ATTACHMENT_MAX_BYTES: Type.Integer({ minimum: 1, maximum: 1024 * 1024 * 1024, default: 25 * 1024 * 1024 }),
  /**
   * The size at which a request takes no more comments or attachments (bytes; at most 12 MiB,
   * below MongoDB's 16 MiB document limit with room for status changes and a delete).
   */
  REQUEST_DOCUMENT_MAX_BYTES: Type.Integer({
    minimum: 64 * 1024,
    maximum: 12 * 1024 * 1024,
    default: 12 * 1024 * 1024,
  }),
  /** JSON object overriding rows of the fallback SLA table, used when no SLA policy matches (see README). */
  SLA_POLICY: Type.Optional(Type.String({ minLength: 2 })),
  /**
   * How long the SLA policies a create picks from stay in memory (ms; 0: read on every create):
   * a policy changed through another replica applies to this one's new requests at most this late.
   */
  SLA_POLICY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 5000 }),
  SLA_WARNING_RATIO: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, default: 0.8 }),
  SLA_MONITOR_INTERVAL_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 15_000 }),
  SLA_MONITOR_ENABLED: Type.Boolean({ default: true }),
  IDENTITY_RPC_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 30_000, default: 2000 }),
  /** How long users and groups read from the read model stay in memory (0: not kept). */
  DIRECTORY_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 5000 }),
  /**
   * How long a page-mode list's count is kept for the same filter (ms; 0: every page counts): the
   * next pages and the same page again count nothing. This process's writes drop it at once.
   */
  LIST_TOTAL_CACHE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  /** How long a list with `q` reads the store (a regex check an hour or day at a time); then it answers what it found. */
  REQUEST_SEARCH_MAX_TIME_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 2000 }),
  /**
   * How old a change must be before the changes feed serves it (ms): longer than a write takes to
   * commit after its replica stamped `updatedAt`, plus the clock skew between replicas.
   */
  CHANGES_SETTLE_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 2000 }),
  /** How long a deleted request stays restorable in the trash before it is purged for good. */
  TRASH_RETENTION_DAYS: Type.Number({ exclusiveMinimum: 0, maximum: 3650, default: 30 }),
  /** How often each replica's purge pass looks for requests whose trash period ended. */
  TRASH_PURGE_INTERVAL_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 600_000 }),
  /** How often each replica's bulk worker looks for running jobs (a job made here wakes it). */
  BULK_JOBS_POLL_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 10_000 }),
  /** How long a worker holds a bulk job unrenewed: after a crash, another process resumes it then. */
  BULK_JOB_LEASE_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 15_000 }),
  READ_MODEL_DURABLE: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'requests-read-model' }),
});

export type RequestsConfig = Static<typeof requestsConfigSchema>;

export function loadRequestsConfig(env: NodeJS.ProcessEnv = process.env): RequestsConfig {
  return loadConfig(requestsConfigSchema, env);
}

/** Defaults for tests and the bench: every variable at its documented default. */
export function defaultRequestsConfig(
  overrides: Partial<RequestsConfig> & Pick<RequestsConfig, 'PRINCIPAL_VERIFY_KEYS'>,
): RequestsConfig {
  const key = { PRINCIPAL_VERIFY_KEYS: overrides.PRINCIPAL_VERIFY_KEYS };
  return { ...loadConfig(requestsConfigSchema, key), ...overrides };
}

export const listenPort = (config: RequestsConfig) => config.REQUESTS_PORT ?? config.PORT;
