import mongoose, { type Connection } from 'mongoose';
import type { Logger } from './logger.js';
import { storeDeadlinePlugin } from './store-deadline.js';

export type { Connection };

export interface MongoOptions {
  url: string;
  dbName: string;
  logger?: Logger;
  serverSelectionTimeoutMS?: number;
}

/**
 * One connection per service, to its own database. Models are created on this connection
 * (`conn.model(...)`), never on mongoose's global registry.
 */
export async function connectMongo({ url, dbName, logger, serverSelectionTimeoutMS = 10_000 }: MongoOptions) {
  const conn = mongoose.createConnection(url, {
    dbName,
    serverSelectionTimeoutMS,
    // Indexes are built explicitly by ensureIndexes at start, so failures surface there.
    autoIndex: false,
    autoCreate: true,
  });
  // Every read made while serving a call carries the call's remaining time (store-deadline.ts).
  conn.plugin(storeDeadlinePlugin);
  conn.on('disconnected', () => logger?.warn({ dbName }, 'mongodb disconnected'));
  conn.on('reconnected', () => logger?.info({ dbName }, 'mongodb reconnected'));
  await conn.asPromise();
  return conn;
}

/** Builds every model's indexes; run once at start (idempotent). */
export async function ensureIndexes(conn: Connection): Promise<void> {
  for (const model of Object.values(conn.models)) {
    await model.createCollection().catch(() => undefined);
    await model.createIndexes();
  }
}

export async function pingMongo(conn: Connection): Promise<void> {
  if (!conn.db) throw new Error('mongodb not connected');
  await conn.db.admin().ping();
}

const UNREACHABLE_ERRORS = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'MongoPoolClearedError',
]);

/**
 * True when an operation failed because the database could not be reached (not because of what it
 * was asked): the driver's connection errors, and mongoose giving up on a command it buffered
 * while disconnected. The HTTP layer answers these 503 SERVICE_UNAVAILABLE, which clients retry.
 */
/**
 * Server errors that say the server is going away, not that the query is wrong: a query that
 * reached a server in the middle of its shutdown (ShutdownInProgress, InterruptedAtShutdown,
 * InterruptedDueToReplStateChange).
 */
const SHUTTING_DOWN_CODES = new Set([91, 11600, 11602]);
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT']);

export function isDatabaseUnreachable(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: unknown } | null;
  if (!e?.name) return false;
  return (
    UNREACHABLE_ERRORS.has(e.name) ||
    (e.name === 'MongoServerError' && SHUTTING_DOWN_CODES.has(Number(e.code))) ||
    // The driver passes some socket failures through as they are (a write after the server
    // closed the connection: "This socket has been ended by the other party").
    (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) ||
    (e.name === 'MongooseError' && /buffering timed out/.test(e.message ?? ''))
  );
}

/** Escapes user input for use inside a RegExp (search filters). */
export const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
