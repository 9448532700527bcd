import {
  baseConfig,
  configSchema,
  loadConfig,
  overloadConfig,
  principalConfig,
} from '@support-desk/platform/core';
import { metricsConfig } from '@support-desk/platform/metrics';
import { type Static, Type } from 'typebox';

/** Every variable the audit service reads (documented with defaults in README.md). */
const auditConfigSchema = configSchema({
  ...baseConfig,
  ...metricsConfig(9483),
  ...principalConfig,
  ...overloadConfig,
  PORT: Type.Integer({ minimum: 1, maximum: 65535, default: 8083 }),
  /** Takes precedence over PORT so one environment file can hold every service's port. */
  AUDIT_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  MONGO_DB: Type.String({ minLength: 1, default: 'audit' }),
  AUDIT_DURABLE: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'audit' }),
  AUDIT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 4096, default: 512 }),
  AUDIT_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 5000, default: 256 }),
  AUDIT_BATCH_FLUSH_MS: Type.Integer({ minimum: 1, maximum: 1000, default: 25 }),
  AUDIT_BATCH_WRITES: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
  AUDIT_MAX_DELIVER: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  AUDIT_ACK_WAIT_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 30_000 }),
  AUDIT_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 0 }),
  AUDIT_RETENTION_SWEEP_MS: Type.Integer({ minimum: 1000, maximum: 86_400_000, default: 60_000 }),
  AUDIT_RETENTION_SWEEP_BATCH: Type.Integer({ minimum: 1, maximum: 100_000, default: 5000 }),
  AUDIT_STATS_LOG_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  /** Events per store batch (`getMore`) of `GET /v1/events/export`: what one export holds at once. */
  AUDIT_EXPORT_BATCH_SIZE: Type.Integer({ minimum: 1, maximum: 10_000, default: 500 }),
});

export type AuditConfig = Static<typeof auditConfigSchema>;

export function loadAuditConfig(env: NodeJS.ProcessEnv = process.env): AuditConfig {
  return loadConfig(auditConfigSchema, env);
}

export const listenPort = (config: AuditConfig) => config.AUDIT_PORT ?? config.PORT;

/** The ingestion tuning the AUDIT_* variables set (shared by the server and the bench). */
export const ingestionSettings = (config: AuditConfig) => ({
  durable: config.AUDIT_DURABLE,
  concurrency: config.AUDIT_CONCURRENCY,
  batchSize: config.AUDIT_BATCH_SIZE,
  flushMs: config.AUDIT_BATCH_FLUSH_MS,
  maxConcurrentWrites: config.AUDIT_BATCH_WRITES,
  maxDeliver: config.AUDIT_MAX_DELIVER,
  ackWaitMs: config.AUDIT_ACK_WAIT_MS,
  statsLogMs: config.AUDIT_STATS_LOG_MS,
});
