// The PostgreSQL cluster under FerretDB (the default local store backend): its settings, and a
// minimal client of PostgreSQL's wire protocol (simple queries, trust authentication only) with
// which the infra script sets the cluster up and the tests' private stores create and drop their
// databases. A client library would be one more dependency and `psql` one more binary to find
// before anything is installed; the few statements we send need neither.
import net from 'node:net';

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

function startupMessage(user, database) {
  const params = Buffer.from(
    `user\0${user}\0database\0${database}\0application_name\0support-desk-setup\0\0`,
    'utf8',
  );
  const head = Buffer.alloc(8);
  head.writeInt32BE(8 + params.length, 0);
  head.writeInt32BE(196608, 4); // protocol 3.0
  return Buffer.concat([head, params]);
}

function queryMessage(sql) {
  const body = Buffer.from(`${sql}\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('Q', 0, 'latin1');
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
}

/** ErrorResponse fields: S(everity), C(ode), M(essage), … each a C string. */
function errorFields(body) {
  const fields = {};
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const end = body.indexOf(0, i + 1);
    fields[String.fromCharCode(body[i])] = body.toString('utf8', i + 1, end);
    i = end + 1;
  }
  return fields;
}

function dataRow(body) {
  const row = [];
  let i = 2;
  for (let n = body.readInt16BE(0); n > 0; n--) {
    const len = body.readInt32BE(i);
    i += 4;
    row.push(len < 0 ? null : body.toString('utf8', i, i + len));
    if (len > 0) i += len;
  }
  return row;
}

/**
 * Runs `sql` (one or more statements, simple query protocol) on host:port as `user` in `database`
 * and resolves with the text rows of the last result. Rejects with a PostgresError (`code` is the
 * SQLSTATE: 57P03 while the server starts) or when nothing answers within `timeoutMs`.
 */
export function pgQuery({ host = '127.0.0.1', port, user, database, timeoutMs = 5000 }, sql) {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let rows = [];
    let error = null;
    let sent = false;
    let settled = false;
    const sock = net.connect({ host, port });
    const done = (err, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(
      () => done(new PostgresError(`PostgreSQL on ${host}:${port} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    sock.once('connect', () => sock.write(startupMessage(user, database)));
    sock.once('error', (err) => done(new PostgresError(`PostgreSQL on ${host}:${port}: ${err.message}`)));
    sock.once('close', () => done(error ?? new PostgresError(`PostgreSQL on ${host}:${port} closed`)));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 5 && buf.length >= 1 + buf.readInt32BE(1)) {
        const type = String.fromCharCode(buf[0]);
        const body = buf.subarray(5, 1 + buf.readInt32BE(1));
        buf = buf.subarray(1 + buf.readInt32BE(1));
        if (type === 'R' && body.readInt32BE(0) !== 0) {
          return done(
            new PostgresError(
              `PostgreSQL on ${host}:${port} asks ${user} for a password; the local cluster trusts loopback connections`,
            ),
          );
        }
        if (type === 'E') {
          const f = errorFields(body);
          error = new PostgresError(`PostgreSQL: ${f.M ?? 'error'}`, f.C);
          if (!sent) return done(error); // refused at start-up (e.g. "the database system is starting up")
        } else if (type === 'T') {
          rows = [];
        } else if (type === 'D') {
          rows.push(dataRow(body));
        } else if (type === 'Z') {
          if (!sent) {
            sent = true;
            sock.write(queryMessage(sql));
          } else {
            sock.write(Buffer.from([0x58, 0, 0, 0, 4])); // Terminate
            return done(error, rows);
          }
        }
      }
    });
  });
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
