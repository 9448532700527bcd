import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Static, Type } from 'typebox';
import {
  baseConfig,
  checkPublicOrigin,
  ConfigError,
  configSchema,
  loadConfig,
  overloadConfig,
  principalConfig,
} from '@support-desk/platform/core';
import { metricsConfig } from '@support-desk/platform/metrics';

/** `<repo>/.data/identity`, from dist/src/config.js. */
const DEFAULT_DATA_DIR = resolve(fileURLToPath(import.meta.url), '../../../../../.data/identity');

const identityConfigSchema = configSchema({
  ...baseConfig,
  ...metricsConfig(9482),
  ...overloadConfig,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8082 }),
  IDENTITY_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  MONGO_DB: Type.String({ pattern: '^[A-Za-z0-9_-]{1,63}$', default: 'identity' }),
  IDENTITY_DATA_DIR: Type.String({ default: DEFAULT_DATA_DIR }),
  OAUTH_ISSUER: Type.String({ pattern: '^https?://[^/]+$', default: 'http://127.0.0.1:8080' }),
  OAUTH_AUDIENCE: Type.String({ minLength: 1, default: 'support-desk-api' }),
  /** JSON array of private JWKs (EC P-256 or Ed25519) with `kid`; the first signs, the rest only verify. */
  OAUTH_SIGNING_KEYS: Type.Optional(Type.String({ minLength: 2 })),
  OAUTH_CODE_TTL_SECONDS: Type.Integer({ minimum: 1, maximum: 600, default: 60 }),
  /** The shortest lifetime an expiring API key may be given (a typo such as 30s for 30d is refused). */
  API_KEY_MIN_LIFETIME_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 60 }),
  OAUTH_ACCESS_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600 }),
  OAUTH_REFRESH_TTL_SECONDS: Type.Integer({ minimum: 300, maximum: 31_536_000, default: 2_592_000 }),
  OAUTH_SESSION_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 2_592_000, default: 43_200 }),
  /** The settings console accepts a login session only this long after sign-in (then: sign in again). */
  CONSOLE_SESSION_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 1800 }),
  /** Failed sign-ins per account from one address (IPv6: one /64) before backoff starts. */
  LOGIN_FAILURES_BEFORE_BACKOFF: Type.Integer({ minimum: 1, default: 5 }),
  /** The first backoff; it doubles with each further failure, up to the throttle window. */
  LOGIN_BACKOFF_SECONDS: Type.Integer({ minimum: 1, default: 30 }),
  /** Failed sign-ins from one address across all accounts before that address must wait the window out. */
  LOGIN_MAX_FAILURES_PER_IP: Type.Integer({ minimum: 1, default: 20 }),
  LOGIN_THROTTLE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  /** How often expired sessions, lapsed login counters and spent OAuth grants are purged; 0 = never. */
  IDENTITY_HOUSEKEEPING_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 600_000 }),
  /**
   * How long a replica names groups in user views from memory; its own group writes apply at once,
   * other replicas' when their event arrives, and at the latest after this. 0 = read every time.
   */
  IDENTITY_GROUP_CACHE_TTL_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 10_000 }),
  /**
   * How often a replica looks for LDAP connections whose sync interval has passed (the lease lets
   * one replica run each); 0 = this replica runs no scheduled syncs (`deskctl idp sync` still does).
   */
  IDENTITY_LDAP_SYNC_TICK_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 60_000 }),
  /**
   * The only directory an LDAP connection's `passwordFile` may name a file in (a mounted Docker or
   * Kubernetes secret); anything else identity can read is refused.
   */
  LDAP_SECRETS_DIR: Type.String({ pattern: '^/', default: '/run/secrets' }),
});

export type IdentityConfig = Static<typeof identityConfigSchema>;

/** What deskctl and the use cases read (deskctl verifies no principal, so it needs no key). */
export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return loadConfig(identityConfigSchema, env);
}

/** The service also verifies the gateway's principal assertions. */
const identityServiceConfigSchema = configSchema({
  ...identityConfigSchema.properties,
  ...principalConfig,
});

export type IdentityServiceConfig = Static<typeof identityServiceConfigSchema>;

/**
 * In production the signing keys come from OAUTH_SIGNING_KEYS (compose and Kubernetes require
 * it): a key file generated per replica would sign tokens the other replicas do not publish, and
 * under Kubernetes the file system is read-only. The generated key file is for development.
 */
export function loadIdentityServiceConfig(env: NodeJS.ProcessEnv = process.env): IdentityServiceConfig {
  const config = loadConfig(identityServiceConfigSchema, env);
  if (config.NODE_ENV === 'production' && !config.OAUTH_SIGNING_KEYS) {
    throw new ConfigError(
      'Invalid configuration: OAUTH_SIGNING_KEYS must be set in production (a generated key file is for development)',
    );
  }
  checkPublicOrigin('OAUTH_ISSUER', config.OAUTH_ISSUER, config.NODE_ENV);
  return config;
}

/**
 * A secret an administrator named by its variable (an LDAP connection's bind password): read
 * when it is used, never stored. The one read of the environment outside the config schema,
 * since the variable's name is data (each connection names its own).
 */
export const environmentSecret =
  (env: NodeJS.ProcessEnv = process.env) =>
  (name: string): string | undefined =>
    env[name];

export function listenPort(config: IdentityConfig): number {
  return config.IDENTITY_PORT ?? config.PORT;
}
