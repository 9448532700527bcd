// The PostgreSQL cluster under FerretDB (the default local store backend): its settings, and the
// few statements with which the infra script sets the cluster up and the tests' private stores
// create and drop their databases, sent with node-postgres (`pg`, the maintained client of the
// Node ecosystem; the infra script runs after `npm ci`, so it is installed by then).

/** The values `SD_STORE` accepts: FerretDB's backend when FerretDB is the store (no mongod). */
export const STORE_BACKENDS = ['postgresql', 'sqlite'];

/** `SD_STORE`'s value, checked: `postgresql` (the default, also for unset or empty) or `sqlite`. */
export function storeBackend(value) {
  if (value === undefined || value === '') return 'postgresql';
  if (STORE_BACKENDS.includes(value)) return value;
  throw new Error(
    `SD_STORE=${value} is not a store backend: use postgresql (the default) or sqlite (FerretDB's backend)`,
  );
}

/** The role FerretDB connects as (owner of its databases; CREATEDB for the tests' private stores). */
export const FERRETDB_ROLE = 'ferretdb';

/**
 * postgresql.conf settings for a local development and test store (written to an included file at
 * every start, so a change here applies at the next restart):
 * - loopback TCP only, and a unix socket in a directory only the cluster's owner can enter;
 * - fsync and full_page_writes stay on: off, an OS crash or power loss can corrupt the cluster
 *   beyond repair, and they cost little here;
 * - synchronous_commit off, wal_writer_delay 20ms: a commit does not wait for its WAL flush (measured
 *   on this kind of shared machine: an insert through FerretDB 0.9 ms instead of 3.1, an update by
 *   _id 1.5 ms instead of 4.9). What was acknowledged survives a crash of FerretDB (the process the
 *   fault tests kill and pause) and of any client: the commit is in PostgreSQL. A crash of
 *   PostgreSQL itself or of the machine can lose the last acknowledged commits, at most
 *   3 x wal_writer_delay (60 ms) of them, and never corrupts anything; a local development store
 *   can take that (production runs MongoDB);
 * - jit off: FerretDB's statements are short lookups, and a JIT compile of a big scan costs more
 *   than it saves;
 * - plan_cache_mode force_custom_plan: FerretDB sends the field of a pushed-down condition as a
 *   parameter (`_jsonb->$1 @> $2`), and a generic plan cannot match that to the index on
 *   `_jsonb->'_id'`; after five runs of a prepared statement PostgreSQL may switch to the generic
 *   plan, a sequential scan (measured under a create bench: FerretDB's read by `_id` before each
 *   update 1.4 ms on average and growing with the table, 0.13-0.15 ms with custom plans);
 * - shared_buffers 256MB: the working set of a development store stays in memory.
 */
export const postgresSettings = ({ host, port, socketDir }) => ({
  listen_addresses: host,
  port: String(port),
  unix_socket_directories: socketDir,
  unix_socket_permissions: '0700',
  fsync: 'on',
  full_page_writes: 'on',
  synchronous_commit: 'off',
  wal_writer_delay: '20ms',
  jit: 'off',
  plan_cache_mode: 'force_custom_plan',
  shared_buffers: '256MB',
  max_connections: '200',
  log_min_messages: 'warning',
  log_checkpoints: 'off',
});

/** The URL FerretDB gets for a database of the cluster (trust authentication on loopback). */
export const ferretdbPostgresUrl = ({ host, port, database }) =>
  `postgres://${FERRETDB_ROLE}@${host}:${port}/${database}`;

export class PostgresError extends Error {
  constructor(message, code) {
    super(message);
    this.name = 'PostgresError';
    this.code = code;
  }
}

// Every value as the text PostgreSQL sent: callers compare names and counts, never compute.
const asText = { getTypeParser: () => (value) => value };

/**
 * Runs `sql` (one or more statements, simple query protocol) on host:port as `user` in `database`
 * and resolves with the text rows of the last result. Rejects with a PostgresError (`code` is the
 * SQLSTATE: 57P03 while the server starts) or when nothing answers within `timeoutMs`.
 */
export async function pgQuery({ host = '127.0.0.1', port, user, database, timeoutMs = 5000 }, sql) {
  // Imported here, not at the top: the deployment tools' build imports this module's settings
  // before `npm ci` has installed anything (.ci/run starts it first). A development dependency:
  // only the local launcher and its tests speak to PostgreSQL, never a service in the image.
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    host,
    port,
    user,
    database,
    application_name: 'support-desk-setup',
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    types: asText,
  });
  // A connection the server drops after the error of a failed start must not throw unhandled.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const results = await client.query({ text: sql, rowMode: 'array' });
    const last = Array.isArray(results) ? results[results.length - 1] : results;
    return last?.rows ?? [];
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new PostgresError(`PostgreSQL on ${host}:${port}: ${message}`, err?.code);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** True when the server accepts connections and answers a query as `user` within `timeoutMs`. */
export async function pgReady(place, timeoutMs = 2000) {
  try {
    await pgQuery({ ...place, timeoutMs }, 'SELECT 1');
    return true;
  } catch {
    return false;
  }
}
