import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox';
import { Value } from 'typebox/value';
import { firstSchemaProblem } from './schema-problems.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Variables every service reads. Service schemas spread these and add their own. */
export const baseConfig = {
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  HOST: Type.String({ default: '127.0.0.1' }),
  MONGO_URL: Type.String({ pattern: '^mongodb(\\+srv)?://', default: 'mongodb://127.0.0.1:27027' }),
  NATS_URL: Type.String({ pattern: '^(nats|tls)://', default: 'nats://127.0.0.1:4223' }),
  NATS_NAMESPACE: Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$', default: 'sd' }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  /**
   * On SIGTERM, how long a service goes on serving after /readyz turns 503 (every answer then
   * says `Connection: close`), so load balancers and gateways move their traffic elsewhere before
   * the listener closes. Kubernetes: about the endpoint propagation time (5000). Keep it above the
   * gateway's UPSTREAM_WRITE_IDLE_MS (250), so the gateway closes idle write connections first.
   */
  SHUTDOWN_DRAIN_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /**
   * How long a dependency (store, NATS, Redis) must have failed every background check before
   * /readyz turns 503, plus up to half as long again at random per process, so replicas sharing a
   * store that blinks or is busy do not all leave their Service at once (issue 31). A slow check
   * is not a failure. 0: the first failed check.
   */
  READINESS_DOWN_AFTER_MS: Type.Integer({ minimum: 0, maximum: 300_000, default: 10_000 }),
  /**
   * Serialise writes to one aggregate across processes with a lock document (see
   * aggregate-lock.ts). Only the local store needs it, and only with several replicas: MongoDB
   * applies each document write atomically.
   */
  STORE_WRITE_LOCKS: Type.Boolean({ default: false }),
  /** This service's Ed25519 private key (PEM, PKCS#8): what it sends over NATS is signed with it. */
  SERVICE_SIGNING_KEY: Type.Optional(Type.String({ pattern: '-----BEGIN PRIVATE KEY-----' })),
  /**
   * JSON object: each service's Ed25519 public key(s), PEM (SPKI), by service name (several PEM
   * blocks for one service during a rotation); the same value for every service. Outside
   * production, both unset: the development key file (service-keys.ts).
   */
  SERVICE_VERIFY_KEYS: Type.Optional(Type.String({ minLength: 2 })),
  /**
   * Only while upgrading from a release that did not sign what it sends: until this instant
   * (ISO 8601), a message with no signature at all is accepted as one of that release. Unset
   * (the default): never. Set it for the rollout, to a time shortly after it ends.
   */
  ACCEPT_UNSIGNED_UNTIL: Type.Optional(Type.String({ format: 'date-time' })),
};

/** What every service behind the gateway adds: the key(s) it verifies principal assertions with. */
export const principalConfig = {
  /**
   * The gateway's principal public key(s), PEM (SPKI, Ed25519; several blocks during a rotation).
   * No default in any environment: `npm start`, the tests and the deployments each provide one.
   */
  PRINCIPAL_VERIFY_KEYS: Type.String({ pattern: '-----BEGIN PUBLIC KEY-----' }),
};

/** The variables of deadlines and admission, for every service behind the gateway (see its README). */
export const overloadConfig = {
  /**
   * The longest a call may run in this service (ms): the budget when the gateway names none, and
   * the most it may name (it names its own UPSTREAM_TIMEOUT_MS less its own time).
   */
  CALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000 }),
  /** Lists (without a search) one process runs at once; past it, 503 with Retry-After. */
  LIST_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 4 }),
  /** Searches (a list with `q` or `search`) one process runs at once. */
  SEARCH_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  /**
   * How long a page-mode list's count is kept for the same filter (ms; 0: every page counts): its
   * next pages and the same page again count nothing (`createListTotals`: capped counts in every
   * list, exact ones in the users lists).
   */
  LIST_TOTAL_CACHE_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  /** Exports (a streamed download of a whole log) one process runs at once. */
  EXPORT_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 1000, default: 2 }),
  /** Event-loop delay (ms, sampled every second) past which every call but health is shed; 0: off. */
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
};

export interface AdmissionLimits {
  CALL_TIMEOUT_MS: number;
  LIST_CONCURRENCY: number;
  SEARCH_CONCURRENCY: number;
  EXPORT_CONCURRENCY: number;
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: number;
}

export const configSchema = <P extends TProperties>(props: P) =>
  Type.Object(props, { additionalProperties: true });

/**
 * A rejected value is echoed only when its variable can hold nothing secret: a number, a boolean
 * or one of a fixed set of words. Free text (secrets, keys, URLs that may carry a password) never is.
 */
function isSafeToShow(schema: TSchema | undefined): boolean {
  if (!schema) return false;
  const { type, anyOf } = schema as { type?: unknown; anyOf?: { const?: unknown }[] };
  if (type === 'integer' || type === 'number' || type === 'boolean') return true;
  return Array.isArray(anyOf) && anyOf.every((o) => o.const !== undefined);
}

/**
 * Reads the variables the schema names from `env` (nothing else reads process.env), applies
 * defaults, converts numbers and booleans, and fails naming the first bad variable.
 */
export function loadConfig<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const withDefaults = Value.Default(schema, raw);
  const converted = Value.Convert(schema, withDefaults);
  const first = firstSchemaProblem(schema, converted);
  if (first) {
    const name = first.path.replace(/^\//, '') || '(root)';
    const shown = !(name in raw)
      ? ' (missing)'
      : isSafeToShow(schema.properties[name])
        ? ` (got ${JSON.stringify(raw[name])})`
        : ' (the value is not shown: it may hold a secret)';
    throw new ConfigError(`Invalid configuration: ${name} ${first.message}${shown}`);
  }
  return converted as Static<T>;
}
