import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { createServer, Socket } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FERRETDB_ENV,
  ferretdbArgs,
  mongodArgs,
  natsArgs,
  pgQuery,
  redisArgs,
  redisClusterArgs,
  redisClusterCreateArgs,
  storeBackend,
} from '@support-desk/platform/launch';
import type { Teardownable } from './env.js';

/**
 * Private, real server processes for tests that must stop and restart a dependency (outage
 * tests) without disturbing the shared servers other test files use. Loopback only.
 */
export interface PrivateServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Kills the process with SIGKILL (a crash) and waits until it is gone. */
  crash(): Promise<void>;
  /** Pauses the process (SIGSTOP: it holds its connections and answers nothing) or resumes it. */
  pause(paused: boolean): void;
}

/**
 * Ports handed out by `freePort`: below the kernel's ephemeral range (32768 and up), so no
 * `listen(0)` or outgoing connection anywhere can take one, and reserved across the test processes
 * running in parallel by a file created exclusively. A port found free and then bound by the
 * process it was meant for a second later can no longer be given to another test file meanwhile
 * (a CI run saw a service fail with EADDRINUSE and the gateway reach another stack's service).
 */
const PORT_RANGE = { from: 20_000, to: 32_000 };
const RESERVATION_MS = 15 * 60_000; // longer than any test file runs (tap: 300 s)
const reservations = join(tmpdir(), 'support-desk-test-ports');

function reserve(port: number): boolean {
  const file = join(reservations, String(port));
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch {
    // Held by another test process, unless that reservation is stale: then take it over (of two
    // processes doing so at once, only one creates the file again).
    try {
      if (Date.now() - statSync(file).mtimeMs < RESERVATION_MS) return false;
      unlinkSync(file);
      closeSync(openSync(file, 'wx'));
      return true;
    } catch {
      return false;
    }
  }
}

const bindable = (port: number) =>
  new Promise<boolean>((res) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });

/** A loopback port no other test process will be given; bounded to 1,000 tries. */
export async function freePort(): Promise<number> {
  mkdirSync(reservations, { recursive: true });
  const span = PORT_RANGE.to - PORT_RANGE.from;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * span);
    if (reserve(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.from}-${PORT_RANGE.to} after 1,000 tries`);
}

/** A binary on the PATH or in the system directories; throws naming it when missing. */
export function findBinary(name: string, extra: string[] = []): string {
  const dirs = [...extra, ...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/local/bin'];
  for (const d of dirs) {
    const p = d.endsWith(name) ? d : join(d, name);
    if (existsSync(p)) return p;
  }
  throw new Error(`${name} not found (run npm test, which installs it)`);
}

async function waitForPort(port: number, host: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const up = await new Promise<boolean>((res) => {
      const s = new Socket();
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('error', () => res(false));
      s.connect(port, host);
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`server on ${host}:${port} did not start within ${timeoutMs} ms`);
}

/**
 * The private servers running: killed when the test process exits without its teardowns (a
 * file whose top-level set-up failed), so no server outlives the file that started it.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A server process on `port` with its own temporary directory (removed at teardown). `command`
 * runs at every start; `logFile`, when given, receives the process's output (for servers that
 * explain a failed start only there). `host` is the address it listens on (a test network
 * namespace's, see netns.ts; else loopback).
 */
export function privateServer(
  t: Teardownable,
  scheme: string,
  command: (
    port: number,
    dir: string,
  ) => { bin: string; args: string[]; env?: NodeJS.ProcessEnv; logFile?: string },
  port: number,
  afterStop?: () => Promise<void>,
  host = '127.0.0.1',
): PrivateServer {
  const dir = mkdtempSync(join(tmpdir(), 'sd-test-'));
  let child: ChildProcess | undefined;
  const server: PrivateServer = {
    url: `${scheme}://${host}:${port}`,
    port,
    async start() {
      const { bin, args, env, logFile } = command(port, dir);
      const log = logFile ? openSync(logFile, 'a') : 'ignore';
      try {
        const started = spawn(bin, args, { stdio: ['ignore', log, log], env: { ...process.env, ...env } });
        running.add(started);
        started.once('exit', () => running.delete(started));
        child = started;
      } finally {
        if (typeof log === 'number') closeSync(log);
      }
      await waitForPort(port, host);
    },
    async crash() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      const gone = new Promise<void>((res) => c.once('exit', () => res()));
      c.kill('SIGKILL');
      await gone;
    },
    pause(paused) {
      child?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((res) => {
        const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
        c.once('exit', () => {
          clearTimeout(timer);
          res();
        });
        c.kill('SIGTERM');
      });
    },
  };
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    await afterStop?.();
  });
  return server;
}

/** A private nats-server; with `configFile`, that file (e.g. its authorization block) applies too. */
export async function startPrivateNats(
  t: Teardownable,
  { configFile, env }: { configFile?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<PrivateServer> {
  const port = await freePort();
  const s = privateServer(
    t,
    'nats',
    (p, dir) => ({
      // The release the project pins (npm test passes the one scripts/infra built); else the machine's.
      bin: process.env.NATS_SERVER_BIN || findBinary('nats-server'),
      // Command-line flags override the file's listen address, ports and store directory.
      args: [...(configFile ? ['-c', configFile] : []), ...natsArgs({ host: '127.0.0.1', port: p, dir })],
      env,
    }),
    port,
  );
  await s.start();
  return s;
}

/** A private redis-server; `extraArgs` (e.g. `--user` ACL rules) follow the usual settings. */
export async function startPrivateRedis(
  t: Teardownable,
  { extraArgs = [] }: { extraArgs?: string[] } = {},
): Promise<PrivateServer> {
  const port = await freePort();
  const s = privateServer(
    t,
    'redis',
    (p, dir) => ({
      bin: findBinary('redis-server'),
      args: [...redisArgs({ host: '127.0.0.1', port: p, dir }), ...extraArgs],
    }),
    port,
  );
  await s.start();
  return s;
}

export interface PrivateRedisCluster {
  /** `host:port,…` of every node, as the gateway's REDIS_CLUSTER_NODES. */
  nodes: string;
  servers: PrivateServer[];
  /** `redis-cli` on one node (e.g. `CLUSTER NODES`); its standard output. */
  cli(port: number, ...args: string[]): Promise<string>;
}

/**
 * A private Redis Cluster: three primaries with one replica each (Debian's redis-server, the
 * settings of the clustered profile), formed with `redis-cli --cluster create`, ready when every
 * node says `cluster_state:ok`. Stopped at teardown.
 */
export async function startPrivateRedisCluster(t: Teardownable): Promise<PrivateRedisCluster> {
  const servers: PrivateServer[] = [];
  for (let i = 0; i < 6; i++) {
    const busPort = await freePort();
    servers.push(
      privateServer(
        t,
        'redis',
        (p, dir) => ({
          bin: findBinary('redis-server'),
          args: redisClusterArgs({ host: '127.0.0.1', port: p, dir, busPort }),
        }),
        await freePort(),
      ),
    );
  }
  await Promise.all(servers.map((s) => s.start()));
  const cli = (port: number, ...args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        findBinary('redis-cli'),
        ['-h', '127.0.0.1', '-p', String(port), ...args],
        { timeout: 30_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`redis-cli: ${stderr || err.message}`)) : resolve(stdout),
      ),
    );
  const ports = servers.map((s) => s.port);
  await cli(ports[0], ...redisClusterCreateArgs('127.0.0.1', ports));
  const ok = async () =>
    (await Promise.all(ports.map((p) => cli(p, 'cluster', 'info').catch(() => '')))).every((info) =>
      info.includes('cluster_state:ok'),
    );
  for (let i = 0; !(await ok()); i++) {
    if (i >= 120) throw new Error('the private Redis Cluster did not reach cluster_state:ok in 30 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  return { nodes: ports.map((p) => `127.0.0.1:${p}`).join(','), servers, cli };
}

/**
 * The PostgreSQL database a private FerretDB stores into, made in the cluster under the shared
 * FerretDB (`SD_POSTGRES_URL`, exported by the infra script) so that outage tests exercise the
 * backend that runs by default; null when the shared store is not FerretDB on PostgreSQL, or with
 * `SD_STORE=sqlite` (then the private FerretDB uses SQLite too).
 */
async function privatePostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const shared = process.env.SD_POSTGRES_URL;
  if (!shared || storeBackend(process.env.SD_STORE) !== 'postgresql') return null;
  const u = new URL(shared);
  const place = { host: u.hostname, port: Number(u.port) || 5432, user: decodeURIComponent(u.username) };
  const admin = { ...place, database: decodeURIComponent(u.pathname.slice(1)), timeoutMs: 30_000 };
  await dropOrphanedDatabases(admin);
  // The pid in the name lets a later run drop what a killed test process left behind.
  const name = `${PRIVATE_DB_PREFIX}${process.pid}_${randomBytes(4).toString('hex')}`;
  await pgQuery(admin, `CREATE DATABASE ${name}`);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    drop: async () => {
      await pgQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const PRIVATE_DB_PREFIX = 'sd_private_';

/** Drops private databases whose test process is gone (at most 20 per call). */
async function dropOrphanedDatabases(admin: Parameters<typeof pgQuery>[0]): Promise<void> {
  const rows = await pgQuery(
    admin,
    `SELECT datname FROM pg_database WHERE datname LIKE '${PRIVATE_DB_PREFIX.replaceAll('_', '\\_')}%' LIMIT 20`,
  );
  for (const [name] of rows) {
    const pid = Number(/^sd_private_(\d+)_/.exec(name ?? '')?.[1]);
    if (!pid || processAlive(pid)) continue;
    await pgQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  }
}

/** Whether a process of this pid runs (EPERM: it does, as another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A private store: mongod when installed, else FerretDB on the shared store's backend (its own
 * PostgreSQL database, dropped at teardown, or its own SQLite directory). Stopping, crashing or
 * pausing it acts on the FerretDB process only; its data outlives a restart, as on a real server.
 */
export async function startPrivateMongo(t: Teardownable): Promise<PrivateServer> {
  const port = await freePort();
  // npm test passes the FerretDB the local stack runs (scripts/infra builds it into the machine cache).
  const candidates = [
    process.env.FERRETDB_BIN ?? '',
    join(process.env.GOPATH ?? join(homedir(), 'go'), 'bin', 'ferretdb'),
  ].filter(Boolean);
  let mongod: string | null = null;
  try {
    mongod = findBinary('mongod');
  } catch {
    // FerretDB then
  }
  const postgres = mongod ? null : await privatePostgresDatabase();
  const s = privateServer(
    t,
    'mongodb',
    (p, dir) =>
      mongod
        ? { bin: mongod, args: mongodArgs({ host: '127.0.0.1', port: p, dir }) }
        : {
            bin: findBinary('ferretdb', candidates),
            args: ferretdbArgs({
              host: '127.0.0.1',
              port: p,
              dir,
              logLevel: 'error',
              postgresqlUrl: postgres?.url,
            }),
            env: FERRETDB_ENV,
          },
    port,
    postgres?.drop,
  );
  await s.start();
  return s;
}
