// The PostgreSQL cluster FerretDB stores into (SD_STORE=postgresql, the default): Debian's
// PostgreSQL, a cluster under <data dir>/postgres owned by an unprivileged user, on a loopback port.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  FERRETDB_ROLE,
  ferretdbPostgresUrl,
  pgQuery,
  pgReady,
  postgresSettings,
} from '../../libs/platform/launch/postgres.mjs';
import { HOST, InfraError, ROOT, log } from './common.mjs';
import { GIN_INDEX_SQL } from './postgres-indexes.mjs';
import { aptInstall, isRoot } from './packages.mjs';
import { findBinary, isExecutable, livePidFromFile, tailFile, waitFor } from './probes.mjs';

export const FERRETDB_DATABASE = 'ferretdb';
const SUPERUSER = 'postgres';
/** PostgreSQL refuses to run as root; as root the cluster belongs to the Debian package's user. */
const SYSTEM_USER = 'postgres';

/** The directory of initdb, pg_ctl and postgres: Debian's newest version, else pg_ctl on PATH. */
export function findPostgresBinDir() {
  const base = '/usr/lib/postgresql';
  let versions = [];
  try {
    versions = fs
      .readdirSync(base)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    // not a Debian layout
  }
  for (const v of versions) {
    const dir = path.join(base, v, 'bin');
    if (['initdb', 'pg_ctl', 'postgres'].every((b) => isExecutable(path.join(dir, b)))) return dir;
  }
  const pgCtl = findBinary('pg_ctl');
  if (!pgCtl) return null;
  const dir = path.dirname(fs.realpathSync(pgCtl));
  return isExecutable(path.join(dir, 'initdb')) ? dir : null;
}

/** Finds PostgreSQL's server binaries, installing Debian's `postgresql` when missing (root only). */
export function ensurePostgresInstalled() {
  let dir = findPostgresBinDir();
  if (dir) return dir;
  if (!isRoot()) {
    throw new InfraError(
      'PostgreSQL is not installed (the default store backend, SD_STORE=postgresql).\n' +
        'Install it:   sudo apt-get install postgresql\n' +
        "or use FerretDB's SQLite backend:   SD_STORE=sqlite",
    );
  }
  log('installing missing package: postgresql');
  aptInstall(['postgresql']);
  dir = findPostgresBinDir();
  if (!dir) throw new InfraError('could not install postgresql with apt-get (see output above)');
  return dir;
}

/** Where the cluster lives and how it is reached. */
export function postgresPlace(c) {
  const link = path.join(c.dataDir, 'postgres');
  let base = link;
  try {
    base = fs.realpathSync(link); // see placeCluster()
  } catch {
    // not made yet
  }
  return {
    link,
    base,
    data: path.join(base, 'data'),
    socketDir: path.join(base, 'run'),
    logFile: path.join(base, 'postgres.log'),
    pidFile: path.join(base, 'data', 'postmaster.pid'), // the postmaster's own (first line: its pid)
    port: c.postgresPort,
    url: `postgres://${HOST}:${c.postgresPort}`,
    ferretdbUrl: ferretdbPostgresUrl({ host: HOST, port: c.postgresPort, database: FERRETDB_DATABASE }),
  };
}

const superuser = (p, database = 'postgres', timeoutMs = 30_000) => ({
  host: HOST,
  port: p.port,
  user: SUPERUSER,
  database,
  timeoutMs,
});

/** Runs a PostgreSQL binary as the cluster's owner (the `postgres` user when we are root). */
function runAsOwner(binDir, bin, args, { cwd, timeoutMs }) {
  const cmd = path.isAbsolute(bin) ? bin : path.join(binDir, bin);
  const [file, argv] = isRoot()
    ? ['setpriv', [`--reuid=${SYSTEM_USER}`, `--regid=${SYSTEM_USER}`, '--init-groups', '--', cmd, ...args]]
    : [cmd, args];
  const r = spawnSync(file, argv, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.error) return { ok: false, output: `${r.error.message}${output ? `\n${output}` : ''}` };
  return { ok: r.status === 0, output: output || `exit code ${r.status ?? r.signal}` };
}

/**
 * Makes <data dir>/postgres. When the `postgres` user cannot reach the data directory (a checkout
 * under /root, mode 0700) or the socket's path would pass the kernel's 107 bytes, the cluster lives
 * in a directory of its own instead (in the postgres user's home, else the temp directory, named by
 * a hash of the data directory), and <data dir>/postgres is a link to it.
 */
function placeCluster(p, binDir) {
  if (fs.existsSync(p.link)) return;
  fs.mkdirSync(path.dirname(p.link), { recursive: true });
  const socketFits = path.join(p.link, 'run', '.s.PGSQL.65535').length <= 100;
  const test = findBinary('test') ?? '/usr/bin/test';
  const reachable =
    !isRoot() || runAsOwner(binDir, test, ['-x', path.dirname(p.link)], { timeoutMs: 10_000 }).ok;
  if (socketFits && reachable) {
    fs.mkdirSync(p.link);
    return;
  }
  const home = isRoot() && fs.existsSync('/var/lib/postgresql') ? '/var/lib/postgresql' : os.tmpdir();
  const hash = createHash('sha256').update(path.dirname(p.link)).digest('hex').slice(0, 10);
  const elsewhere = path.join(home, `support-desk-${hash}`);
  fs.mkdirSync(elsewhere, { recursive: true });
  fs.symlinkSync(elsewhere, p.link);
  log(
    `postgres ${reachable ? 'socket path too long' : "data directory out of the postgres user's reach"}: cluster in ${elsewhere}`,
  );
}

/** Makes the directories and hands them to the cluster's owner; checks that it can reach them. */
function prepareDirectories(p, binDir) {
  // The socket's directory: only the cluster's owner (and root) may enter it.
  fs.mkdirSync(p.socketDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(p.socketDir, 0o700);
  if (!isRoot()) return;
  const owned = spawnSync('chown', [`${SYSTEM_USER}:`, p.base, p.socketDir], { encoding: 'utf8' });
  if (owned.status !== 0) {
    throw new InfraError(
      `could not give ${p.base} to the "${SYSTEM_USER}" user (is Debian's postgresql installed?): ${owned.stderr}`,
    );
  }
  if (fs.existsSync(p.logFile)) fs.chownSync(p.logFile, fs.statSync(p.base).uid, fs.statSync(p.base).gid);
  const test = findBinary('test') ?? '/usr/bin/test';
  const probe = runAsOwner(binDir, test, ['-w', p.socketDir], { cwd: p.base, timeoutMs: 10_000 });
  if (!probe.ok) {
    throw new InfraError(
      `PostgreSQL runs as the "${SYSTEM_USER}" user, which cannot use ${p.base} (${probe.output}); ` +
        'make its parent directories traversable (chmod o+x) or point SD_DATA_DIR somewhere it can reach',
    );
  }
}

/** initdb once; the settings file is rewritten at every start so changes to it apply. */
function initCluster(p, binDir) {
  const versionFile = path.join(p.data, 'PG_VERSION');
  if (!fs.existsSync(versionFile)) {
    log(`postgres initdb ${path.relative(ROOT, p.data)} (owner: ${isRoot() ? SYSTEM_USER : 'this user'})`);
    // UTF8 and the C locale: FerretDB refuses other encodings and most locales.
    const r = runAsOwner(
      binDir,
      'initdb',
      ['-D', p.data, '-U', SUPERUSER, '-E', 'UTF8', '--locale=C', '-A', 'trust', '--no-instructions'],
      { cwd: p.base, timeoutMs: 120_000 },
    );
    if (!r.ok) throw new InfraError(`initdb failed:\n${r.output}`);
    // Trust, and only on the socket (in a directory only the owner enters) and on IPv4 loopback.
    writeOwned(p, path.join(p.data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
    fs.appendFileSync(
      path.join(p.data, 'postgresql.conf'),
      "\n# Support Desk's settings (libs/platform/launch/postgres.mjs), rewritten at every start\ninclude_if_exists = 'support-desk.conf'\n",
    );
  }
  const clusterVersion = fs.readFileSync(versionFile, 'utf8').trim();
  const binVersion = path.basename(path.dirname(binDir));
  if (/^\d+$/.test(binVersion) && binVersion !== clusterVersion) {
    throw new InfraError(
      `the cluster in ${p.data} was made by PostgreSQL ${clusterVersion} but ${binDir} is ${binVersion}: ` +
        'remove that directory (its data is lost) or install the matching version',
    );
  }
  const settings = postgresSettings({ host: HOST, port: p.port, socketDir: p.socketDir });
  const text = Object.entries(settings)
    .map(([k, v]) => `${k} = '${v.replaceAll("'", "''")}'`)
    .join('\n');
  writeOwned(p, path.join(p.data, 'support-desk.conf'), `${text}\n`);
}

function writeOwned(p, file, text) {
  fs.writeFileSync(file, text);
  const st = fs.statSync(p.base);
  if (isRoot()) fs.chownSync(file, st.uid, st.gid);
}

/**
 * The role and database FerretDB uses, and the GIN indexes that let PostgreSQL answer FerretDB's
 * pushed-down equalities from an index (postgres-indexes.mjs). Idempotent: run at every `up`.
 */
async function setupDatabases(p) {
  await pgQuery(
    superuser(p),
    `DO $$ BEGIN
       IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${FERRETDB_ROLE}') THEN
         CREATE ROLE ${FERRETDB_ROLE} LOGIN CREATEDB;
       END IF;
     END $$`,
  );
  // template1 first: every database created later (FerretDB's, the tests' private ones) inherits it.
  await pgQuery(superuser(p, 'template1'), GIN_INDEX_SQL);
  const exists = await pgQuery(
    superuser(p),
    `SELECT 1 FROM pg_database WHERE datname = '${FERRETDB_DATABASE}'`,
  );
  if (exists.length === 0) {
    await pgQuery(superuser(p), `CREATE DATABASE ${FERRETDB_DATABASE} OWNER ${FERRETDB_ROLE}`);
  } else {
    await pgQuery(superuser(p, FERRETDB_DATABASE, 300_000), GIN_INDEX_SQL);
  }
}

/** Starts (or reuses) the cluster and sets FerretDB's database up. */
export async function startPostgres(c) {
  let p = postgresPlace(c);
  const ready = () => pgReady(superuser(p));
  const ownPid = livePidFromFile(p.pidFile, 'postgres');
  if (await ready()) {
    log(`postgres ${p.url.padEnd(28)} already running${ownPid ? ` (pid ${ownPid})` : ' (reused)'}`);
  } else {
    const binDir = ensurePostgresInstalled();
    placeCluster(p, binDir);
    p = postgresPlace(c);
    prepareDirectories(p, binDir);
    initCluster(p, binDir);
    log(`postgres ${p.url.padEnd(28)} starting (log ${path.relative(ROOT, p.logFile)})`);
    // -w: pg_ctl returns once the server accepts connections, or fails after -t seconds.
    const seconds = String(Math.ceil(c.timeoutMs / 1000));
    const r = runAsOwner(
      binDir,
      'pg_ctl',
      ['start', '-D', p.data, '-l', p.logFile, '-w', '-t', seconds, '-s'],
      {
        cwd: p.base,
        timeoutMs: c.timeoutMs + 10_000,
      },
    );
    if (!r.ok || !(await waitFor(ready, { timeoutMs: c.timeoutMs }))) {
      throw new InfraError(
        `PostgreSQL did not start (${r.output}). Last lines of ${p.logFile}:\n${tailFile(p.logFile)}`,
      );
    }
  }
  try {
    await setupDatabases(p);
  } catch (err) {
    throw new InfraError(`could not set up FerretDB's database in PostgreSQL on ${p.url}: ${err.message}`);
  }
  return p;
}

/** Stops the cluster this script started (pg_ctl stop -m fast: connections closed, clean shutdown). */
export function stopPostgres(c) {
  const p = postgresPlace(c);
  const pid = livePidFromFile(p.pidFile, 'postgres');
  if (!pid) return { state: fs.existsSync(p.data) ? 'none' : 'absent', port: p.port };
  const binDir = findPostgresBinDir();
  if (!binDir) return { state: `FAILED to stop pid ${pid}: pg_ctl not found`, port: p.port };
  const r = runAsOwner(binDir, 'pg_ctl', ['stop', '-D', p.data, '-m', 'fast', '-w', '-t', '30', '-s'], {
    cwd: p.base,
    timeoutMs: 40_000,
  });
  return { state: r.ok ? `stopped (pid ${pid})` : `FAILED to stop pid ${pid}: ${r.output}`, port: p.port };
}

/** For `status`: whether it answers, and the postmaster's pid when it is ours. */
export async function postgresStatus(c) {
  const p = postgresPlace(c);
  return {
    name: 'postgres',
    url: p.url,
    up: await pgReady(superuser(p)),
    pid: livePidFromFile(p.pidFile, 'postgres'),
  };
}
