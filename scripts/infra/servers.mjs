// Starting, stopping and reporting the local servers (launch settings: libs/platform/launch).
import fs from 'node:fs';
import path from 'node:path';
import {
  FERRETDB_ENV,
  ferretdbArgs,
  mongodArgs,
  natsArgs,
  redisArgs,
} from '../../libs/platform/launch/servers.mjs';
import { HOST, InfraError, config, infraUrls, isExternal, log, warn } from './common.mjs';
import {
  cmdlineOf,
  findBinary,
  livePidFromFile,
  mongoReady,
  natsReady,
  readPid,
  redisReady,
  tcpCheck,
} from './probes.mjs';
import { ensureDebianPackages } from './packages.mjs';
import { buildFerretDB, findFerretDB } from './ferretdb.mjs';
import { ensureNatsServer } from './nats-server.mjs';
import { startServer, stopPid } from './launcher.mjs';
import { postgresPlace, postgresStatus, startPostgres, stopPostgres } from './postgres.mjs';
import { downClustered, upClustered } from './clustered.mjs';

/** FerretDB on PostgreSQL is the store unless mongod is installed or SD_STORE=sqlite. */
const usesPostgres = (c) => c.store === 'postgresql' && !findBinary('mongod');

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
        bin: ensureNatsServer(),
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
      bin: findFerretDB() || buildFerretDB(),
      args: ferretdbArgs({
        host: HOST,
        port: c.mongoPort,
        dir: abs('ferretdb'),
        debugPort: c.ferretDebugPort,
        postgresqlUrl: usesPostgres(c) ? postgresPlace(c).ferretdbUrl : undefined,
      }),
    }),
  };
}

/**
 * The PostgreSQL URL of the FerretDB that serves (ours: read from its command line, so a FerretDB
 * started on the other backend before SD_STORE changed is described truly), '' when the store is
 * not FerretDB on PostgreSQL.
 */
function storePostgresUrl(c) {
  const pid = livePidFromFile(path.join(c.dataDir, 'ferretdb', 'ferretdb.pid'), 'ferretdb');
  const args = pid ? (cmdlineOf(pid) ?? []) : [];
  if (args.some((a) => a.startsWith('--handler='))) {
    const url = args.find((a) => a.startsWith('--postgresql-url='));
    return args.includes('--handler=postgresql') && url ? url.slice('--postgresql-url='.length) : '';
  }
  return usesPostgres(c) ? postgresPlace(c).ferretdbUrl : '';
}

/**
 * The environment the services and tests get: the three URLs, and SD_POSTGRES_URL, FerretDB's
 * PostgreSQL database, beside which the tests' private stores make databases of their own (empty
 * when the store is not FerretDB on PostgreSQL, so that a stale value from the shell is overridden).
 */
function infraEnv(c = config()) {
  if (isExternal()) return infraUrls();
  return { ...infraUrls(), SD_POSTGRES_URL: storePostgresUrl(c) };
}

/**
 * A FerretDB of ours already serving on the other backend (SD_STORE changed, or the default did,
 * since it started) is reused like any running server, with a warning: stopping it would pull the
 * store from under whoever uses it.
 */
function otherBackendRunning(c) {
  const pid = livePidFromFile(path.join(c.dataDir, 'ferretdb', 'ferretdb.pid'), 'ferretdb');
  const handler = pid && (cmdlineOf(pid) ?? []).find((a) => a.startsWith('--handler='));
  if (!handler || findBinary('mongod') || handler === `--handler=${c.store}`) return false;
  warn(
    `FerretDB (pid ${pid}) on port ${c.mongoPort} runs the ${handler.slice('--handler='.length)} backend, ` +
      `not ${c.store} (SD_STORE): reusing it; to switch, run node scripts/infra.mjs down, then up`,
  );
  return true;
}

/**
 * Starts (or reuses) the infrastructure and returns { MONGO_URL, NATS_URL, REDIS_URL }; with
 * `cluster`, the clustered profile (clustered.mjs) instead of the single Redis and NATS, and its
 * REDIS_CLUSTER_NODES and NATS_STREAM_REPLICAS too.
 */
export async function up({ cluster = false } = {}) {
  if (isExternal()) {
    const urls = infraUrls();
    log('MONGO_URL, NATS_URL and REDIS_URL are set; using them and starting nothing.');
    return urls;
  }
  const c = config();
  fs.mkdirSync(c.dataDir, { recursive: true });
  const defs = serverDefs(c).filter((d) => !cluster || d.name === 'mongo');
  const needsInstall = cluster && !findBinary('redis-server') ? ['redis'] : [];
  for (const def of defs) {
    if (def.name !== 'mongo' && !(await def.ready())) needsInstall.push(def.name);
  }
  if (needsInstall.length) ensureDebianPackages();
  for (const def of defs) {
    if (def.name === 'mongo' && !otherBackendRunning(c) && usesPostgres(c)) await startPostgres(c);
    await startServer(def, c);
  }
  if (cluster) return { ...infraEnv(c), ...(await upClustered(c)) };
  return infraEnv(c);
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
        log(`${name.padEnd(8)} ${r.state}`);
        if (r.state.startsWith('FAILED')) failed = true;
      }
    } else if (await tcpCheck(mine[0].port)) {
      log(
        `${name.padEnd(8)} not started by this script (no pidfile); leaving whatever runs on port ${mine[0].port}`,
      );
    } else {
      log(`${name.padEnd(8)} not running`);
    }
  }
  await downClustered(c).catch((err) => {
    warn(err.message);
    failed = true;
  });
  // PostgreSQL after FerretDB, its only client; whatever SD_STORE says now, if it runs it is ours.
  const pg = stopPostgres(c);
  if (pg.state.startsWith('FAILED')) failed = true;
  if (pg.state === 'none' || pg.state === 'absent') {
    if (usesPostgres(c) && (await tcpCheck(pg.port))) {
      log(`postgres not started by this script; leaving whatever runs on port ${pg.port}`);
    } else if (pg.state === 'none' || usesPostgres(c)) {
      log('postgres not running');
    }
  } else {
    log(`postgres ${pg.state}`);
  }
  if (failed) throw new InfraError('some servers could not be stopped');
  return infraEnv(c);
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
    if (def.name === 'mongo') {
      const pg = await postgresStatus(c);
      if (storePostgresUrl(c) || pg.pid) servers.push({ ...pg, managed: Boolean(pg.pid) });
    }
    const pid = livePidFromFile(def.pidFile, def.bin);
    servers.push({ name: def.name, url: def.url, up: await def.ready(), pid, managed: Boolean(pid) });
  }
  return { urls: infraEnv(c), servers, external: false };
}

export function envLines(urls = infraEnv()) {
  const q = (v) => `'${String(v).replaceAll("'", "'\\''")}'`;
  return Object.entries(urls).map(([k, v]) => `export ${k}=${q(v)}`);
}
