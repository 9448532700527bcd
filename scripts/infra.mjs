#!/usr/bin/env node
// Local infrastructure for Support Desk: Redis, NATS (JetStream) and a MongoDB-compatible store.
//
//   node scripts/infra.mjs up|down|status|env     (also: npm run infra -- <cmd>)
//   node scripts/infra.mjs build-ferretdb [out]    (build FerretDB from source, see buildFerretDB())
//
// If MONGO_URL, NATS_URL and REDIS_URL are all set, nothing is started and those URLs are used
// (e.g. `docker compose up -d mongo redis nats`, or a cluster).
// Otherwise real servers are started detached under <repo>/.data/ (git-ignored), bound to 127.0.0.1:
//   Redis  redis://127.0.0.1:6380     pid/log in .data/redis
//   NATS   nats://127.0.0.1:4223      (monitoring 8223, JetStream in .data/nats) pid/log in .data/nats
//   Mongo  mongodb://127.0.0.1:27027  mongod if installed, else FerretDB v1 (SQLite backend)
// Servers that already answer on their port are reused. `down` only stops servers this script
// started (it finds them through their pidfiles); anything else on those ports is left alone.
//
// Overrides (mainly for running a second, isolated set): SD_DATA_DIR, SD_REDIS_PORT, SD_NATS_PORT,
// SD_NATS_MONITOR_PORT, SD_MONGO_PORT, SD_FERRETDB_DEBUG_PORT (FerretDB's debug listener, off by default),
// SD_INFRA_TIMEOUT (seconds, default 60).
// FerretDB binary: $FERRETDB_BIN, `ferretdb` on PATH, $(go env GOPATH)/bin/ferretdb, .data/bin/ferretdb,
// else it is built from source into .data/bin/ferretdb.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HOST = '127.0.0.1';

function envInt(name, def) {
  const v = process.env[name];
  if (v === undefined || v === '') return def;
  const n = Number.parseInt(v, 10);
  if (!Number.isInteger(n) || n <= 0 || n > 65535)
    throw new InfraError(`${name}=${v} is not a valid port number`);
  return n;
}

function config() {
  const dataDir = path.resolve(process.env.SD_DATA_DIR || path.join(ROOT, '.data'));
  const timeoutS = Number(process.env.SD_INFRA_TIMEOUT || 60);
  return {
    dataDir,
    timeoutMs: (Number.isFinite(timeoutS) && timeoutS > 0 ? timeoutS : 60) * 1000,
    redisPort: envInt('SD_REDIS_PORT', 6380),
    natsPort: envInt('SD_NATS_PORT', 4223),
    natsMonitorPort: envInt('SD_NATS_MONITOR_PORT', 8223),
    mongoPort: envInt('SD_MONGO_PORT', 27027),
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

const log = (...args) => console.log('[infra]', ...args);
const warn = (...args) => console.error('[infra]', ...args);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// URLs

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

// ---------------------------------------------------------------------------------------------
// Small helpers: binaries, processes, probes

const EXTRA_BIN_DIRS = ['/usr/sbin', '/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin'];

function isExecutable(p) {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Finds an executable on PATH, then in the sbin directories (Debian puts nats-server in /usr/sbin). */
export function findBinary(name) {
  const dirs = [...(process.env.PATH || '').split(path.delimiter).filter(Boolean), ...EXTRA_BIN_DIRS];
  for (const dir of dirs) {
    const p = path.join(dir, name);
    if (isExecutable(p)) return p;
  }
  return null;
}

function isAlive(pid) {
  if (!pid || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  // A zombie still "exists" for kill(0); treat it as dead.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
  } catch {
    // no /proc: trust kill(0)
  }
  return true;
}

function cmdlineOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return null;
  }
}

function readPid(pidFile) {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The pid from a pidfile, if that process is alive and still looks like the expected server. */
function livePidFromFile(pidFile, binName) {
  const pid = readPid(pidFile);
  if (!pid || !isAlive(pid)) return null;
  const cmd = cmdlineOf(pid);
  // Guard against pid reuse: the process must still be the server we started.
  if (cmd && !cmd.some((a) => path.basename(a).startsWith(binName))) return null;
  return pid;
}

function tailFile(file, lines = 30) {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log file)';
  }
}

/** Resolves true if a TCP connection to host:port succeeds within timeoutMs. */
export function tcpCheck(port, host = HOST, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (ok) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

/** Sends `payload` and resolves with the reply bytes once `isComplete(buf)` says so (or null). */
function tcpExchange(port, host, payload, isComplete, timeoutMs = 2000) {
  return new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    let settled = false;
    const sock = net.connect({ port, host });
    const done = (value) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve(value);
    };
    sock.setTimeout(timeoutMs, () => done(null));
    sock.once('connect', () => sock.write(payload));
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (isComplete(buf)) done(buf);
    });
    sock.once('error', () => done(null));
    sock.once('close', () => done(null));
  });
}

/** Redis: PING must answer +PONG (or -NOAUTH, which still proves it is Redis and up). */
async function redisReady(port, host = HOST) {
  const reply = await tcpExchange(port, host, 'PING\r\n', (b) => b.includes('\r\n'));
  if (!reply) return false;
  const s = reply.toString('latin1');
  return s.startsWith('+PONG') || s.startsWith('-NOAUTH');
}

function httpGet(url, timeoutMs = 2000) {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode, body }));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/** NATS: the monitoring endpoint reports healthy with JetStream enabled. */
async function natsReady(monitorPort, host = HOST) {
  const r = await httpGet(`http://${host}:${monitorPort}/healthz?js-enabled-only=true`);
  return Boolean(r && r.status === 200 && /"status"\s*:\s*"ok"/.test(r.body));
}

/** MongoDB wire protocol: OP_MSG {hello: 1, $db: "admin"} and look for ok: 1 in the reply. */
function mongoHelloMessage() {
  const cstr = (s) => Buffer.from(`${s}\0`, 'utf8');
  const int32 = (n) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    return b;
  };
  const elems = Buffer.concat([
    Buffer.from([0x10]),
    cstr('hello'),
    int32(1),
    Buffer.from([0x02]),
    cstr('$db'),
    int32(6),
    cstr('admin'),
  ]);
  const doc = Buffer.concat([int32(4 + elems.length + 1), elems, Buffer.from([0])]);
  const body = Buffer.concat([int32(0) /* flagBits */, Buffer.from([0]) /* section kind 0 */, doc]);
  const header = Buffer.concat([int32(16 + body.length), int32(1), int32(0), int32(2013)]);
  return Buffer.concat([header, body]);
}

async function mongoReady(port, host = HOST) {
  const reply = await tcpExchange(
    port,
    host,
    mongoHelloMessage(),
    (b) => b.length >= 4 && b.length >= b.readInt32LE(0),
  );
  if (!reply || reply.length < 21 || reply.readInt32LE(12) !== 2013) return false;
  for (const [type, size] of [
    [0x01, 8],
    [0x10, 4],
  ]) {
    const marker = Buffer.from([type, 0x6f, 0x6b, 0x00]); // <type>"ok\0"
    const i = reply.indexOf(marker, 21);
    if (i >= 0 && i + 4 + size <= reply.length) {
      const v = size === 8 ? reply.readDoubleLE(i + 4) : reply.readInt32LE(i + 4);
      return v === 1;
    }
  }
  return false;
}

async function waitFor(check, { timeoutMs, intervalMs = 250, abort }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    const why = abort?.();
    if (why) throw new InfraError(why);
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

// ---------------------------------------------------------------------------------------------
// Package installation (Debian)

function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.error) return { ok: false, message: r.error.message };
  return { ok: r.status === 0, message: `exit code ${r.status ?? r.signal}` };
}

let aptUpdated = false;
/** apt-get install (with apt-get update first). Returns true on success. Root only. */
export function aptInstall(packages) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    log('apt-get update');
    const u = run('apt-get', ['update'], { env });
    if (!u.ok) warn(`apt-get update failed (${u.message}); trying the install anyway`);
    aptUpdated = true;
  }
  log(`apt-get install -y ${packages.join(' ')}`);
  const r = run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
  if (!r.ok) warn(`apt-get install ${packages.join(' ')} failed (${r.message})`);
  return r.ok;
}

function ensureDebianPackages() {
  const wanted = [
    ['redis-server', 'redis-server'],
    ['nats-server', 'nats-server'],
  ];
  const missing = wanted.filter(([bin]) => !findBinary(bin)).map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  if (!isRoot()) {
    throw new InfraError(
      [
        `missing: ${missing.join(', ')}.`,
        `Install them:   sudo apt-get install ${missing.join(' ')}`,
        'or run the infrastructure in Docker instead and point the scripts at it:',
        '  docker compose up -d mongo redis nats',
        "  export MONGO_URL='mongodb://127.0.0.1:27017/?replicaSet=rs0&directConnection=true'",
        '  export NATS_URL=nats://127.0.0.1:4222 REDIS_URL=redis://127.0.0.1:6379',
        '(publish those ports from docker-compose.yml, or use a docker-compose.override.yml)',
      ].join('\n'),
    );
  }
  log(`installing missing packages: ${missing.join(' ')}`);
  aptInstall(missing);
  const still = wanted.filter(([bin]) => !findBinary(bin)).map(([, pkg]) => pkg);
  if (still.length)
    throw new InfraError(`could not install ${still.join(', ')} with apt-get (see output above)`);
}

// ---------------------------------------------------------------------------------------------
// FerretDB

const FERRETDB_MODULE = 'github.com/FerretDB/FerretDB';
const FERRETDB_VERSIONS = ['v1.24.2', 'v1.24.0'];

function goBinary() {
  return findBinary('go') || (isExecutable('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : null);
}

/** Finds a FerretDB binary; returns null if there is none. */
export function findFerretDB(dataDir = config().dataDir) {
  const fromEnv = process.env.FERRETDB_BIN;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    warn(`FERRETDB_BIN=${fromEnv} is not an executable file; looking elsewhere`);
  }
  const onPath = findBinary('ferretdb');
  if (onPath) return onPath;
  const go = goBinary();
  if (go) {
    try {
      const gopath = execFileSync(go, ['env', 'GOPATH'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .trim()
        .split(path.delimiter)[0];
      if (gopath && isExecutable(path.join(gopath, 'bin', 'ferretdb')))
        return path.join(gopath, 'bin', 'ferretdb');
    } catch {
      // ignore
    }
  }
  const local = path.join(dataDir, 'bin', 'ferretdb');
  return isExecutable(local) ? local : null;
}

/**
 * Builds FerretDB v1 from source into `outFile`.
 * `go install ...@v1.24.1` does not work here (the proxy refuses that version and the version list),
 * so: `go mod download -json` a pinned version, copy the module to a writable temp dir, write
 * build/version/version.txt (the binary panics without it), then `go build ./cmd/ferretdb`.
 */
export function buildFerretDB(outFile = path.join(config().dataDir, 'bin', 'ferretdb')) {
  const go = goBinary();
  if (!go)
    throw new InfraError(
      'FerretDB is not installed and Go is not available to build it (install mongod or Go)',
    );
  const errors = [];
  for (const version of FERRETDB_VERSIONS) {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ferretdb-build-'));
    try {
      log(`building FerretDB ${version} from source (this takes a minute or two)...`);
      log(`  go mod download -json ${FERRETDB_MODULE}@${version}`);
      const dl = spawnSync(go, ['mod', 'download', '-json', `${FERRETDB_MODULE}@${version}`], {
        cwd: tmp,
        encoding: 'utf8',
        env: { ...process.env, GOFLAGS: '', GO111MODULE: 'on' },
        maxBuffer: 16 * 1024 * 1024,
      });
      let info = {};
      try {
        info = JSON.parse(dl.stdout || '{}');
      } catch {
        // fall through
      }
      if (dl.status !== 0 || !info.Dir) {
        throw new Error(`go mod download failed: ${info.Error || dl.stderr?.trim() || `exit ${dl.status}`}`);
      }
      const src = path.join(tmp, 'src');
      log(`  copying ${info.Dir} to ${src}`);
      execFileSync('cp', ['-r', info.Dir, src], { stdio: 'inherit' });
      execFileSync('chmod', ['-R', 'u+w', src], { stdio: 'inherit' });
      fs.mkdirSync(path.join(src, 'build', 'version'), { recursive: true });
      fs.writeFileSync(path.join(src, 'build', 'version', 'version.txt'), `${version}\n`);
      fs.mkdirSync(path.dirname(outFile), { recursive: true });
      const tmpOut = `${outFile}.partial-${process.pid}`;
      log(`  GOTOOLCHAIN=local go build -trimpath -o ${outFile} ./cmd/ferretdb`);
      const started = Date.now();
      const b = spawnSync(go, ['build', '-trimpath', '-o', tmpOut, './cmd/ferretdb'], {
        cwd: src,
        stdio: 'inherit',
        env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod', GO111MODULE: 'on' },
      });
      if (b.error || b.status !== 0) {
        fs.rmSync(tmpOut, { force: true });
        throw new Error(`go build failed: ${b.error?.message || `exit ${b.status}`}`);
      }
      fs.renameSync(tmpOut, outFile);
      log(`  built ${outFile} in ${Math.round((Date.now() - started) / 1000)} s`);
      return outFile;
    } catch (err) {
      warn(`FerretDB ${version}: ${err.message}`);
      errors.push(`${version}: ${err.message}`);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  throw new InfraError(
    `could not build FerretDB (${errors.join('; ')}).\n` +
      'Install mongod, set FERRETDB_BIN to a FerretDB v1 binary, or set MONGO_URL/NATS_URL/REDIS_URL ' +
      '(e.g. `docker compose up -d mongo redis nats`).',
  );
}

// ---------------------------------------------------------------------------------------------
// Servers

function serverDefs(c) {
  const abs = (...p) => path.join(c.dataDir, ...p);
  return [
    {
      name: 'redis',
      bin: 'redis-server',
      url: `redis://${HOST}:${c.redisPort}`,
      port: c.redisPort,
      dir: abs('redis'),
      pidFile: abs('redis', 'redis.pid'),
      logFile: abs('redis', 'redis.log'),
      ready: () => redisReady(c.redisPort),
      command: () => ({
        bin: findBinary('redis-server'),
        args: [
          '--port',
          String(c.redisPort),
          '--bind',
          HOST,
          '--dir',
          abs('redis'),
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
      }),
    },
    {
      name: 'nats',
      bin: 'nats-server',
      url: `nats://${HOST}:${c.natsPort}`,
      port: c.natsPort,
      dir: abs('nats'),
      pidFile: abs('nats', 'nats.pid'),
      logFile: abs('nats', 'nats.log'),
      ready: () => natsReady(c.natsMonitorPort),
      command: () => ({
        bin: findBinary('nats-server'),
        args: [
          '-a',
          HOST,
          '-p',
          String(c.natsPort),
          '-m',
          String(c.natsMonitorPort),
          '-js',
          '-sd',
          abs('nats'),
        ],
      }),
    },
    mongoDef(c),
  ];
}

function mongoDef(c) {
  const abs = (...p) => path.join(c.dataDir, ...p);
  const base = {
    name: 'mongo',
    url: `mongodb://${HOST}:${c.mongoPort}`,
    port: c.mongoPort,
    ready: () => mongoReady(c.mongoPort),
    settleMs: 500,
  };
  if (findBinary('mongod')) {
    return {
      ...base,
      bin: 'mongod',
      dir: abs('mongo'),
      pidFile: abs('mongo', 'mongod.pid'),
      logFile: abs('mongo', 'mongod.log'),
      command: () => ({
        bin: findBinary('mongod'),
        args: ['--dbpath', abs('mongo'), '--port', String(c.mongoPort), '--bind_ip', HOST],
      }),
    };
  }
  return {
    ...base,
    bin: 'ferretdb',
    dir: abs('ferretdb'),
    pidFile: abs('ferretdb', 'ferretdb.pid'),
    logFile: abs('ferretdb', 'ferretdb.log'),
    env: { FERRETDB_TELEMETRY: 'disable' },
    command: () => ({
      bin: findFerretDB(c.dataDir) || buildFerretDB(abs('bin', 'ferretdb')),
      args: [
        '--handler=sqlite',
        `--sqlite-url=file:${abs('ferretdb')}/`,
        `--listen-addr=${HOST}:${c.mongoPort}`,
        `--state-dir=${abs('ferretdb')}`,
        c.ferretDebugPort ? `--debug-addr=${HOST}:${c.ferretDebugPort}` : '--debug-addr=-',
        '--log-level=warn',
      ],
    }),
  };
}

async function startServer(def, c) {
  const ownPid = livePidFromFile(def.pidFile, def.bin);
  if (await def.ready()) {
    log(
      `${def.name.padEnd(6)} ${def.url.padEnd(28)} already running${ownPid ? ` (pid ${ownPid})` : ' (reused)'}`,
    );
    return;
  }
  if (ownPid) {
    // Ours, but not answering yet (still starting?): give it the usual time.
    log(`${def.name.padEnd(6)} ${def.url.padEnd(28)} waiting for pid ${ownPid}...`);
    if (await waitFor(def.ready, { timeoutMs: c.timeoutMs })) return;
    throw new InfraError(
      `${def.name} (pid ${ownPid}) did not become ready within ${c.timeoutMs / 1000} s. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`,
    );
  }
  if (await tcpCheck(def.port)) {
    // Something answers on the port but is not healthy yet; wait, it may be starting.
    log(`${def.name.padEnd(6)} port ${def.port} is in use, waiting for it to become ready...`);
    if (await waitFor(def.ready, { timeoutMs: c.timeoutMs })) return;
    throw new InfraError(
      `port ${HOST}:${def.port} is in use by something that is not a ready ${def.name}; stop it or change SD_*_PORT`,
    );
  }

  fs.mkdirSync(def.dir, { recursive: true });
  const { bin, args } = def.command();
  if (!bin) throw new InfraError(`${def.bin} not found`);
  const fd = fs.openSync(def.logFile, 'a');
  fs.writeSync(fd, `\n--- ${new Date().toISOString()} starting: ${bin} ${args.join(' ')}\n`);
  let exited = null;
  let child;
  try {
    child = spawn(bin, args, {
      cwd: def.dir,
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...(def.env || {}) },
    });
  } finally {
    fs.closeSync(fd);
  }
  child.on('error', (err) => {
    exited = `could not start ${bin}: ${err.message}`;
  });
  child.on('exit', (code, signal) => {
    exited = `${def.name} exited during start-up (${signal ?? `code ${code}`})`;
  });
  child.unref();
  if (child.pid) fs.writeFileSync(def.pidFile, `${child.pid}\n`);
  log(
    `${def.name.padEnd(6)} ${def.url.padEnd(28)} starting (pid ${child.pid}, log ${path.relative(ROOT, def.logFile)})`,
  );

  let ok = false;
  try {
    ok = await waitFor(def.ready, { timeoutMs: c.timeoutMs, abort: () => exited });
    if (ok && def.settleMs) {
      // Make sure it stays up (e.g. FerretDB finishing its backend set-up), then check again.
      await sleep(def.settleMs);
      ok = await waitFor(def.ready, { timeoutMs: c.timeoutMs, abort: () => exited });
    }
  } catch (err) {
    fs.rmSync(def.pidFile, { force: true });
    throw new InfraError(`${err.message}. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`);
  }
  if (!ok) {
    await stopPid(child.pid, def.name, def.bin);
    fs.rmSync(def.pidFile, { force: true });
    throw new InfraError(
      `${def.name} did not become ready within ${c.timeoutMs / 1000} s. Last lines of ${def.logFile}:\n${tailFile(def.logFile)}`,
    );
  }
}

async function stopPid(pid, name, binName) {
  const signalGroup = (sig) => {
    // detached => the server leads its own process group; signal the group, fall back to the pid.
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        // gone
      }
    }
  };
  if (!isAlive(pid)) return true;
  const cmd = cmdlineOf(pid);
  if (cmd && binName && !cmd.some((a) => path.basename(a).startsWith(binName))) return true; // pid reused
  signalGroup('SIGTERM');
  if (await waitFor(async () => !isAlive(pid), { timeoutMs: 10_000, intervalMs: 100 })) return true;
  warn(`${name} (pid ${pid}) did not stop after SIGTERM; sending SIGKILL`);
  signalGroup('SIGKILL');
  return waitFor(async () => !isAlive(pid), { timeoutMs: 5_000, intervalMs: 100 });
}

// ---------------------------------------------------------------------------------------------
// Public API

/** Starts (or reuses) the infrastructure and returns { MONGO_URL, NATS_URL, REDIS_URL }. */
export async function up() {
  if (isExternal()) {
    const urls = infraUrls();
    log('MONGO_URL, NATS_URL and REDIS_URL are set; using them and starting nothing.');
    return urls;
  }
  const c = config();
  fs.mkdirSync(c.dataDir, { recursive: true });
  const defs = serverDefs(c);
  const needsInstall = [];
  for (const def of defs) {
    if (def.name !== 'mongo' && !(await def.ready())) needsInstall.push(def.name);
  }
  if (needsInstall.length) ensureDebianPackages();
  for (const def of defs) await startServer(def, c);
  return infraUrls();
}

/** Stops the servers this script started (via their pidfiles). */
export async function down() {
  if (isExternal()) {
    log('MONGO_URL, NATS_URL and REDIS_URL are set; nothing was started here, nothing to stop.');
    return infraUrls();
  }
  const c = config();
  const defs = serverDefs(c);
  // mongoDef picks mongod vs FerretDB by what is installed; stop whichever has a pidfile.
  const mongoFiles = [
    { pidFile: path.join(c.dataDir, 'mongo', 'mongod.pid'), bin: 'mongod' },
    { pidFile: path.join(c.dataDir, 'ferretdb', 'ferretdb.pid'), bin: 'ferretdb' },
  ];
  const targets = [
    ...defs
      .filter((d) => d.name !== 'mongo')
      .map((d) => ({ name: d.name, pidFile: d.pidFile, bin: d.bin, port: d.port })),
    ...mongoFiles.map((m) => ({ name: 'mongo', ...m, port: c.mongoPort })),
  ];
  const results = await Promise.all(
    targets.map(async (t) => {
      const pid = readPid(t.pidFile);
      if (!pid) return { ...t, state: 'none' };
      const live = livePidFromFile(t.pidFile, t.bin);
      if (!live) {
        fs.rmSync(t.pidFile, { force: true });
        return { ...t, state: 'stale' };
      }
      const ok = await stopPid(live, t.name, t.bin);
      if (ok) fs.rmSync(t.pidFile, { force: true });
      return { ...t, state: ok ? `stopped (pid ${live})` : `FAILED to stop pid ${live}` };
    }),
  );
  let failed = false;
  for (const name of ['redis', 'nats', 'mongo']) {
    const mine = results.filter((r) => r.name === name);
    const acted = mine.filter((r) => r.state !== 'none' && r.state !== 'stale');
    if (acted.length) {
      for (const r of acted) {
        log(`${name.padEnd(6)} ${r.state}`);
        if (r.state.startsWith('FAILED')) failed = true;
      }
    } else if (await tcpCheck(mine[0].port)) {
      log(
        `${name.padEnd(6)} not started by this script (no pidfile); leaving whatever runs on port ${mine[0].port}`,
      );
    } else {
      log(`${name.padEnd(6)} not running`);
    }
  }
  if (failed) throw new InfraError('some servers could not be stopped');
  return infraUrls();
}

function hostPort(url, defPort) {
  try {
    const u = new URL(url);
    const host = u.hostname.split(',')[0];
    return { host, port: Number(u.port) || defPort };
  } catch {
    const m = /^[a-z+]+:\/\/(?:[^@/]*@)?([^:/,?]+)(?::(\d+))?/i.exec(url);
    return m ? { host: m[1], port: Number(m[2]) || defPort } : null;
  }
}

/** Returns { urls, servers: [{ name, url, up, pid, managed }] }. */
export async function status() {
  const urls = infraUrls();
  const servers = [];
  if (isExternal()) {
    for (const [name, key, defPort] of [
      ['redis', 'REDIS_URL', 6379],
      ['nats', 'NATS_URL', 4222],
      ['mongo', 'MONGO_URL', 27017],
    ]) {
      const hp = hostPort(urls[key], defPort);
      servers.push({
        name,
        url: urls[key],
        up: hp ? await tcpCheck(hp.port, hp.host) : false,
        pid: null,
        managed: false,
      });
    }
    return { urls, servers, external: true };
  }
  const c = config();
  for (const def of serverDefs(c)) {
    const pid = livePidFromFile(def.pidFile, def.bin);
    servers.push({ name: def.name, url: def.url, up: await def.ready(), pid, managed: Boolean(pid) });
  }
  return { urls, servers, external: false };
}

export function envLines(urls = infraUrls()) {
  const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
  return Object.entries(urls).map(([k, v]) => `export ${k}=${q(v)}`);
}

// ---------------------------------------------------------------------------------------------
// Workspace set-up shared by start.mjs and test.mjs

/** Runs `npm ci` (or `npm install` without a lockfile) when node_modules is missing. */
export function ensureNodeModules() {
  if (fs.existsSync(path.join(ROOT, 'node_modules'))) return;
  const hasLock = fs.existsSync(path.join(ROOT, 'package-lock.json'));
  const npm = (args) => {
    console.log(`> npm ${args.join(' ')}   (node_modules is missing)`);
    const r = spawnSync('npm', [...args, '--no-audit', '--no-fund'], { cwd: ROOT, stdio: 'inherit' });
    return !r.error && r.status === 0;
  };
  if (hasLock && npm(['ci'])) return;
  if (hasLock) {
    console.log(
      'WARNING: `npm ci` failed (is package-lock.json out of sync with package.json?); trying `npm install`.\n' +
        '         Regenerate the lockfile with `npm install` and commit it.',
    );
  }
  if (!npm(['install'])) throw new InfraError('installing dependencies with npm failed (see above)');
}

/** `tsc -b` at the repo root. Returns true on success (output goes to the terminal). */
export function buildTypeScript() {
  const local = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  const [cmd, args] = isExecutable(local) ? [local, ['-b']] : ['npx', ['tsc', '-b']];
  console.log('> tsc -b');
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  const ok = !r.error && r.status === 0;
  console.log(ok ? `  build ok (${((Date.now() - started) / 1000).toFixed(1)} s)` : '  build FAILED');
  return ok;
}

// ---------------------------------------------------------------------------------------------
// CLI

async function main(argv) {
  const cmd = argv[0] || 'status';
  switch (cmd) {
    case 'up': {
      const urls = await up();
      for (const line of envLines(urls)) log(line);
      return 0;
    }
    case 'down':
      await down();
      return 0;
    case 'status': {
      const { servers, external } = await status();
      if (external) log('using MONGO_URL/NATS_URL/REDIS_URL from the environment');
      for (const s of servers) {
        const extra = s.pid ? ` (pid ${s.pid})` : s.up && !external ? ' (not started by this script)' : '';
        console.log(`${s.name.padEnd(6)} ${s.url.padEnd(40)} ${s.up ? 'up' : 'down'}${extra}`);
      }
      return servers.every((s) => s.up) ? 0 : 3;
    }
    case 'env':
      for (const line of envLines()) console.log(line);
      return 0;
    case 'build-ferretdb':
      buildFerretDB(argv[1] ? path.resolve(argv[1]) : undefined);
      return 0;
    default:
      console.error('usage: node scripts/infra.mjs up|down|status|env|build-ferretdb [out-file]');
      return 2;
  }
}

const invokedDirectly = (() => {
  try {
    return import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1] || '')).href;
  } catch {
    return false;
  }
})();

if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`[infra] ERROR: ${err instanceof InfraError ? err.message : err.stack || err}`);
      process.exit(1);
    },
  );
}
