// The infra script's settings (ports, data directory, overrides), URLs, errors and logging.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { storeBackend } from '../../libs/platform/launch/postgres.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const HOST = '127.0.0.1';

function envInt(name, def) {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number.parseInt(v, 10);
  if (!Number.isInteger(n) || n <= 0 || n > 65535)
    throw new InfraError(`${name}=${v} is not a valid port number`);
  return n;
}

function store() {
  try {
    return storeBackend(process.env.SD_STORE);
  } catch (err) {
    throw new InfraError(err.message);
  }
}

export function config() {
  const dataDir = path.resolve(process.env.SD_DATA_DIR || path.join(ROOT, '.data'));
  const timeoutS = Number(process.env.SD_INFRA_TIMEOUT || 60);
  return {
    dataDir,
    timeoutMs: (Number.isFinite(timeoutS) && timeoutS > 0 ? timeoutS : 60) * 1000,
    redisPort: envInt('SD_REDIS_PORT', 6380),
    natsPort: envInt('SD_NATS_PORT', 4223),
    natsMonitorPort: envInt('SD_NATS_MONITOR_PORT', 8223),
    mongoPort: envInt('SD_MONGO_PORT', 27027),
    // FerretDB's backend when FerretDB is the store (mongod, when installed, wins).
    store: store(),
    postgresPort: envInt('SD_POSTGRES_PORT', 5433),
    // FerretDB's debug/metrics listener is off unless asked for (its default 127.0.0.1:8088 collides).
    ferretDebugPort: process.env.SD_FERRETDB_DEBUG_PORT ? envInt('SD_FERRETDB_DEBUG_PORT', 0) : null,
  };
}

export class InfraError extends Error {
  constructor(message) {
    super(message);
    this.name = 'InfraError';
  }
}

export const log = (...args) => console.log('[infra]', ...args);
export const warn = (...args) => console.error('[infra]', ...args);
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** True when MONGO_URL, NATS_URL and REDIS_URL are all provided by the environment. */
export function isExternal(env = process.env) {
  return Boolean(env.MONGO_URL && env.NATS_URL && env.REDIS_URL);
}

/** The URLs the services/tests should use (environment ones if all three are set). */
export function infraUrls(env = process.env) {
  if (isExternal(env)) {
    return { MONGO_URL: env.MONGO_URL, NATS_URL: env.NATS_URL, REDIS_URL: env.REDIS_URL };
  }
  const c = config();
  return {
    MONGO_URL: `mongodb://${HOST}:${c.mongoPort}`,
    NATS_URL: `nats://${HOST}:${c.natsPort}`,
    REDIS_URL: `redis://${HOST}:${c.redisPort}`,
  };
}
