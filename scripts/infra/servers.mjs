// Starting, stopping and reporting the local servers (launch settings: libs/platform/launch).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  FERRETDB_ENV,
  ferretdbArgs,
  mongodArgs,
  natsArgs,
  redisArgs,
} from '../../libs/platform/launch/servers.mjs';
import { HOST, InfraError, ROOT, config, infraUrls, isExternal, log, sleep, warn } from './common.mjs';
import {
  cmdlineOf,
  findBinary,
  isAlive,
  livePidFromFile,
  mongoReady,
  natsReady,
  readPid,
  redisReady,
  tailFile,
  tcpCheck,
  waitFor,
} from './probes.mjs';
import { ensureDebianPackages } from './packages.mjs';
import { buildFerretDB, findFerretDB } from './ferretdb.mjs';

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
        args: redisArgs({ host: HOST, port: c.redisPort, dir: abs('redis') }),
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
        args: natsArgs({ host: HOST, port: c.natsPort, dir: abs('nats'), monitorPort: c.natsMonitorPort }),
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
        args: mongodArgs({ host: HOST, port: c.mongoPort, dir: abs('mongo') }),
      }),
    };
  }
  return {
    ...base,
    bin: 'ferretdb',
    dir: abs('ferretdb'),
    pidFile: abs('ferretdb', 'ferretdb.pid'),
    logFile: abs('ferretdb', 'ferretdb.log'),
    env: FERRETDB_ENV,
    command: () => ({
      bin: findFerretDB(c.dataDir) || buildFerretDB(abs('bin', 'ferretdb')),
      args: ferretdbArgs({
        host: HOST,
        port: c.mongoPort,
        dir: abs('ferretdb'),
        debugPort: c.ferretDebugPort,
      }),
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
