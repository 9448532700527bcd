import { readFileSync } from 'node:fs';
import {
  baseConfig,
  checkPublicOrigin,
  ConfigError,
  configSchema,
  createLogger,
  loadConfig,
  type Logger,
} from '@support-desk/platform/core';
import { metricsConfig } from '@support-desk/platform/metrics';
import { pino } from 'pino';
import { type Static, Type } from 'typebox';

/** One service's replicas: comma-separated base URLs, balanced by undici's BalancedPool. */
const Urls = (def: string) =>
  Type.String({ pattern: '^https?://[^,\\s]+(,\\s*https?://[^,\\s]+)*$', default: def });
const Ms = (def: number, minimum = 1) => Type.Integer({ minimum, default: def });

/** Every variable the gateway reads; documented with its default in the README. */
const gatewayConfigSchema = configSchema({
  ...baseConfig,
  ...metricsConfig(9480),
  /**
   * The Ed25519 private key (PEM, PKCS#8) the gateway signs principal assertions with; only the
   * gateway holds it (the services hold its public key). No default in any environment.
   */
  PRINCIPAL_SIGNING_KEY: Type.String({ pattern: '-----BEGIN PRIVATE KEY-----' }),
  /**
   * Calls of one event-loop turn whose principal assertions share one signature (issue 37). 1:
   * one signature per call, the only form services before issue 37 accept (a rolling upgrade
   * from such a release sets it until every service runs this one).
   */
  PRINCIPAL_BATCH_MAX: Type.Integer({ minimum: 1, maximum: 64, default: 16 }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  GATEWAY_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  REDIS_URL: Type.String({ pattern: '^rediss?://', default: 'redis://127.0.0.1:6380' }),
  /**
   * A Redis Cluster's nodes (`host:port`, comma-separated; any one is enough to find the others):
   * when set, the gateway uses the Cluster and REDIS_URL only for its credentials and TLS.
   */
  REDIS_CLUSTER_NODES: Type.String({ pattern: '^$|^[^,\\s/]+:\\d+(,\\s*[^,\\s/]+:\\d+)*$', default: '' }),
  REDIS_COMMAND_TIMEOUT_MS: Ms(250),
  LOG_BUFFER_BYTES: Type.Integer({ minimum: 0, default: 4096 }),
  REQUESTS_URL: Urls('http://127.0.0.1:8081'),
  IDENTITY_URL: Urls('http://127.0.0.1:8082'),
  AUDIT_URL: Urls('http://127.0.0.1:8083'),
  WEBHOOKS_URL: Urls('http://127.0.0.1:8084'),
  /**
   * How long the gateway waits for a service's answer, from the call's arrival; what is left of
   * it is the service's budget (`x-sd-timeout-ms`), so the service gives up first.
   */
  UPSTREAM_TIMEOUT_MS: Ms(30_000),
  UPSTREAM_CONNECT_TIMEOUT_MS: Ms(2_000),
  UPSTREAM_CONNECTIONS: Type.Integer({ minimum: 1, default: 128 }),
  /**
   * How long a connection that carries writes may sit idle before the gateway closes it; keep it
   * below every service's SHUTDOWN_DRAIN_MS (see `upstreamPool`). 0: a connection per write.
   */
  UPSTREAM_WRITE_IDLE_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 250 }),
  /** How often each replica of a service given as a list is asked /readyz (0 = never). */
  UPSTREAM_HEALTH_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 250 }),
  JSON_BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024 }),
  ATTACHMENT_MAX_BYTES: Type.Integer({ minimum: 1024, default: 25 * 1024 * 1024 }),
  RPC_TIMEOUT_MS: Ms(2_000),
  API_KEY_CACHE_TTL_MS: Ms(30_000, 0),
  USER_CACHE_TTL_MS: Ms(30_000, 0),
  CLIENT_CACHE_TTL_MS: Ms(60_000, 0),
  /** How long past its TTL a cached identity answer serves while identity does not answer (0: never). */
  CREDENTIAL_STALE_IF_ERROR_MS: Ms(300_000, 0),
  TOKEN_CACHE_TTL_MS: Ms(60_000, 0),
  TOKEN_CACHE_MAX: Type.Integer({ minimum: 1, default: 10_000 }),
  DENY_CACHE_TTL_MS: Ms(1_000, 0),
  DENY_LIST_TTL_SECONDS: Type.Integer({ minimum: 60, default: 3_600 }),
  REDIS_KEY_PREFIX: Type.String({ default: 'sd:gw:' }),
  OAUTH_ISSUER: Type.String({ default: 'http://127.0.0.1:8080' }),
  OAUTH_AUDIENCE: Type.String({ default: 'support-desk-api' }),
  OAUTH_ALGORITHMS: Type.String({ pattern: '^[A-Za-z0-9]+(,[A-Za-z0-9]+)*$', default: 'ES256' }),
  OAUTH_CLOCK_TOLERANCE_SECONDS: Type.Integer({ minimum: 0, maximum: 300, default: 5 }),
  JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  JWKS_COOLDOWN_MS: Ms(30_000, 0),
  JWKS_CACHE_MAX_AGE_MS: Ms(600_000),
  RATE_LIMIT_ENABLED: Type.Boolean({ default: true }),
  RATE_LIMIT_PREFIX: Type.String({ default: 'sd:rl:' }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 60 }),
  RATE_LIMIT_FAILURE_MODE: Type.Union([Type.Literal('fail-open'), Type.Literal('fail-closed')], {
    default: 'fail-open',
  }),
  DEFAULT_PLAN: Type.Union([Type.Literal('standard'), Type.Literal('professional')], {
    default: 'standard',
  }),
  /** Calls one credential may have in flight at once, per gateway process; past it 429 at once. 0: no cap. */
  CREDENTIAL_CONCURRENCY: Type.Integer({ minimum: 0, maximum: 10_000, default: 25 }),
  OAUTH_TOKEN_LIMIT_PER_CLIENT: Type.Integer({ minimum: 1, default: 60 }),
  OAUTH_LIMIT_PER_IP: Type.Integer({ minimum: 1, default: 30 }),
  /** SCIM calls per identity provider connection per rate-limit window (bucket `scim`). */
  SCIM_RATE_LIMIT: Type.Integer({ minimum: 1, default: 600 }),
  /** Failed /v1 authentications per client address (IPv6: per /64) per rate-limit window. */
  AUTH_FAILURES_PER_IP: Type.Integer({ minimum: 1, default: 30 }),
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /** Origins (`https://app.example.com`, comma-separated, or `*`) browsers may call from; none by default. */
  CORS_ALLOWED_ORIGINS: Type.String({ default: '' }),
  /** Refused when true (see `checkCorsOrigins`); kept so an old setting fails loudly. */
  CORS_ALLOW_CREDENTIALS: Type.Boolean({ default: false }),
  CORS_MAX_AGE_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400, default: 600 }),
  /** How long the answer to a POST or PATCH with an Idempotency-Key is kept for replay (1 min to 30 days). */
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 2_592_000, default: 86_400 }),
  TLS_CERT: Type.Optional(Type.String({ minLength: 1 })),
  TLS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  HSTS_MAX_AGE_SECONDS: Type.Integer({ minimum: 0, default: 31_536_000 }),
});

export type GatewayConfig = Static<typeof gatewayConfigSchema>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = loadConfig(gatewayConfigSchema, env);
  if (Boolean(config.TLS_CERT) !== Boolean(config.TLS_KEY)) {
    throw new ConfigError('Invalid configuration: TLS_CERT and TLS_KEY must be set together');
  }
  checkCorsOrigins(config);
  checkClusterNodes(config.REDIS_CLUSTER_NODES);
  checkPublicOrigin('OAUTH_ISSUER', config.OAUTH_ISSUER, config.NODE_ENV);
  return config;
}

/** Each Redis Cluster node is `host:port` with a port from 1 to 65535. */
function checkClusterNodes(value: string) {
  for (const node of listFrom(value)) {
    const port = Number(node.slice(node.lastIndexOf(':') + 1));
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new ConfigError(
        `Invalid configuration: REDIS_CLUSTER_NODES: "${node}" is not host:port with a port from 1 to 65535`,
      );
    }
  }
}

/** Each allowed origin is exactly an origin (scheme, host, port); credentials never. */
function checkCorsOrigins(config: GatewayConfig) {
  const origins = listFrom(config.CORS_ALLOWED_ORIGINS);
  for (const origin of origins) {
    if (origin === '*') continue;
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = null;
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new ConfigError(
        `Invalid configuration: CORS_ALLOWED_ORIGINS: "${origin}" is not an origin (like https://app.example.com, no path or trailing slash)`,
      );
    }
  }
  // Credentialed CORS would let an allowed origin's script act with this site's cookies (the
  // settings console's session); the API needs none (the Authorization header is not a cookie).
  if (config.CORS_ALLOW_CREDENTIALS) {
    throw new ConfigError(
      "Invalid configuration: CORS_ALLOW_CREDENTIALS=true is not supported: cross-origin calls authenticate with the Authorization header, and no other origin may use this site's cookies",
    );
  }
}

/**
 * How long an Idempotency-Key claim lives while its first call runs: a gateway that dies mid-call
 * never stores the answer, and its claim must not block the key for the whole TTL. At least 60 s,
 * and 30 s longer than the upstream timeout, which bounds the wait for a service's answer (an
 * upload still streaming from a slow client when the claim expires is the exception: a retry
 * after that runs again; see the README).
 */
export const idempotencyInFlightMs = (config: GatewayConfig) =>
  Math.max(60_000, config.UPSTREAM_TIMEOUT_MS + 30_000);

export const listenPort = (config: GatewayConfig) => config.GATEWAY_PORT ?? config.PORT;

/** The certificate and key files when the gateway serves TLS itself. */
export function tlsFiles(config: GatewayConfig): { cert: Buffer; key: Buffer } | null {
  return config.TLS_CERT && config.TLS_KEY
    ? { cert: readFileSync(config.TLS_CERT), key: readFileSync(config.TLS_KEY) }
    : null;
}

/**
 * The gateway's logger. One log line per request is one write(2) per request unless buffered:
 * lines are gathered up to LOG_BUFFER_BYTES and flushed at least every second (and synchronously
 * at exit).
 */
export function gatewayLogger(config: GatewayConfig): Logger {
  const destination =
    config.LOG_BUFFER_BYTES > 0
      ? pino.destination({ dest: 1, sync: false, minLength: config.LOG_BUFFER_BYTES })
      : undefined;
  if (destination) {
    setInterval(() => {
      try {
        destination.flush();
      } catch {
        // destroyed (shutting down): the exit hook has flushed synchronously
      }
    }, 1000).unref();
  }
  return createLogger({ service: 'gateway', level: config.LOG_LEVEL, destination });
}

/** Config for tests and the bench: every default, then the given overrides. */
export function gatewayConfig(
  overrides: Partial<GatewayConfig> & Pick<GatewayConfig, 'PRINCIPAL_SIGNING_KEY'>,
): GatewayConfig {
  const key = { PRINCIPAL_SIGNING_KEY: overrides.PRINCIPAL_SIGNING_KEY };
  return { ...loadConfig(gatewayConfigSchema, key), ...overrides };
}

export const listFrom = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
