#!/usr/bin/env node
// `npm start`: install (if needed), build, start the local infrastructure, provision the NATS
// streams, bootstrap an admin (best effort), then run every built service as a child process with
// readable, prefixed logs.
//
// Ctrl-C / SIGTERM stops the services (SIGTERM, then SIGKILL after 15 s). The infrastructure servers
// keep running; `npm run infra down` stops them. If a service exits on its own, everything is stopped
// and the exit code is 1.
//
// Ports (for the readiness check): GATEWAY_PORT 8080, REQUESTS_PORT 8081, IDENTITY_PORT 8082,
// AUDIT_PORT 8083, WEBHOOKS_PORT 8084; Prometheus metrics (METRICS_PORT) on 9480 (gateway), 9481
// (requests), 9482 (identity), 9483 (audit), 9484 (webhooks); SD_METRICS_PORT=0 turns them off.
// Services get MONGO_URL, NATS_URL, REDIS_URL plus the current environment.
//
// `npm start -- --cluster` runs the clustered profile: NATS as a three-server JetStream cluster
// (streams at three replicas), Redis as a Redis Cluster, two replicas of every service (gateways
// 8080 and 8090); see docs/local-infrastructure.md.
// `npm start -- --replicas N` (or SD_REPLICAS=N) runs N processes of every service, replica k on
// the base port + 10·(k-1) (gateways 8080, 8090, …; metrics likewise); every gateway balances over every replica of
// each service (REQUESTS_URL etc. list them all).
// The gateway's principal key pair comes from PRINCIPAL_SIGNING_KEY / PRINCIPAL_VERIFY_KEYS when
// both are set; otherwise a pair is made once and kept in .data/principal-keys.json (development
// only: deployments provide their own, see deploy/README.md). The webhooks service's secret key
// (WEBHOOKS_SECRET_KEY) likewise, in .data/webhooks-secret-key; its deliveries may go to loopback
// receivers (WEBHOOKS_ALLOWED_RANGES defaults to 127.0.0.0/8,::1/128 here, not in deployments).
// The services' own keys, which sign what they send each other over NATS, come from
// SERVICE_SIGNING_KEY / SERVICE_VERIFY_KEYS when set; otherwise every service (and deskctl) reads
// the development key file .data/service-keys.json, made by the first that needs it.

import { spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs, styleText } from 'node:util';
import {
  instanceEnvironment,
  SERVICES,
  serviceEntry,
  spawnService,
  stackEnvironment,
  stackInstances,
  stopProcess,
  waitUntilReady,
} from '../libs/platform/launch/stack.mjs';
import { buildTypeScript, ensureNodeModules, InfraError, ROOT, up } from './infra.mjs';

const STOP_TIMEOUT_MS = 15_000;
const REPLICA_PORT_STEP = 10;
const MAX_REPLICAS = 5;
const READY_TIMEOUT_MS = 60_000;

const COLORS = { identity: 'yellow', requests: 'magenta', audit: 'green', webhooks: 'blue', gateway: 'cyan' };

// Node's styleText colours only a terminal, and honours NO_COLOR and FORCE_COLOR.
const paint = (style, s) => styleText(style, s);
const say = (msg) => console.log(`${paint('bold', '[start]')} ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Log formatting: pino JSON -> "HH:MM:SS LEVEL msg reqId=.. GET /x 200 3.2ms"

const LEVELS = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS = {
  TRACE: 'gray',
  DEBUG: 'gray',
  INFO: 'green',
  WARN: 'yellow',
  ERROR: 'red',
  FATAL: 'red',
};
const pad2 = (n) => String(n).padStart(2, '0');

export function formatLogLine(line) {
  const t = line.trim();
  if (!t.startsWith('{')) return line;
  let o;
  try {
    o = JSON.parse(t);
  } catch {
    return line;
  }
  if (!o || typeof o !== 'object' || !('level' in o) || !('msg' in o)) return line;
  const d = o.time !== undefined ? new Date(o.time) : new Date();
  const when = Number.isNaN(d.getTime())
    ? '--:--:--'
    : `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  const level =
    typeof o.level === 'number' ? LEVELS[o.level] || `L${o.level}` : String(o.level).toUpperCase();
  const parts = [paint('gray', when), paint(LEVEL_COLORS[level] ?? 'reset', level.padEnd(5)), String(o.msg)];
  const req = o.req && typeof o.req === 'object' ? o.req : {};
  const res = o.res && typeof o.res === 'object' ? o.res : {};
  const reqId = o.reqId ?? req.id ?? o.requestId;
  if (reqId !== undefined) parts.push(paint('gray', `reqId=${reqId}`));
  const method = o.method ?? req.method;
  const url = o.url ?? req.url;
  if (method !== undefined || url !== undefined)
    parts.push([method, url].filter((x) => x !== undefined).join(' '));
  const statusCode = o.statusCode ?? res.statusCode;
  if (statusCode !== undefined) parts.push(String(statusCode));
  if (typeof o.responseTime === 'number') parts.push(`${Math.round(o.responseTime * 10) / 10}ms`);
  let out = parts.join(' ');
  const err = o.err && typeof o.err === 'object' ? o.err : null;
  if (err?.message && !String(o.msg).includes(err.message)) out += ` err=${err.message}`;
  if (err?.stack && (o.level >= 50 || level === 'ERROR' || level === 'FATAL')) {
    out += `\n${String(err.stack)
      .split('\n')
      .slice(1)
      .map((l) => `    ${l.trim()}`)
      .join('\n')}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Admin bootstrap (best effort)

function findKey(value, depth = 0) {
  if (!value || typeof value !== 'object' || depth > 3) return null;
  if (typeof value.key === 'string' && value.key) return value.key;
  for (const v of Object.values(value)) {
    const k = findKey(v, depth + 1);
    if (k) return k;
  }
  return null;
}

function parseJsonOutput(text) {
  const t = text.trim();
  if (!t) return null;
  try {
    return JSON.parse(t);
  } catch {
    // maybe log lines around it: try line by line, last JSON object wins
  }
  let found = null;
  for (const line of t.split('\n')) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === 'object') found = v;
    } catch {
      // not JSON
    }
  }
  return found;
}

/** The development principal key pair: from the environment, else made once under .data/. */
function principalKeys() {
  if (process.env.PRINCIPAL_SIGNING_KEY && process.env.PRINCIPAL_VERIFY_KEYS) {
    return { signingKey: process.env.PRINCIPAL_SIGNING_KEY, verifyKeys: process.env.PRINCIPAL_VERIFY_KEYS };
  }
  const file = path.join(ROOT, '.data', 'principal-keys.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keys = {
    signingKey: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    verifyKeys: publicKey.export({ type: 'spki', format: 'pem' }),
  };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(keys), { mode: 0o600 });
  say('made a development principal key pair (.data/principal-keys.json)');
  return keys;
}

/** The development key webhook secrets are encrypted with: from the environment, else made once. */
function webhooksSecretKey() {
  if (process.env.WEBHOOKS_SECRET_KEY) return process.env.WEBHOOKS_SECRET_KEY;
  const file = path.join(ROOT, '.data', 'webhooks-secret-key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, key, { mode: 0o600 });
  say('made a development webhooks secret key (.data/webhooks-secret-key)');
  return key;
}

/**
 * The operator's step before the services start: the JetStream streams, made by the same
 * one-shot docker compose and the chart run (services only wait for them).
 */
function provisionStreams(env) {
  const cli = path.join(ROOT, 'libs', 'platform', 'dist', 'src', 'cli', 'provision-streams.js');
  say('provisioning the NATS streams (provision-streams)');
  const r = spawnSync(process.execPath, ['--disable-proto=throw', cli], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 90_000,
  });
  if (r.status !== 0) {
    const out = `${r.stdout || ''}\n${r.stderr || ''}`.trim().split('\n').slice(-10).join('\n');
    throw new InfraError(
      `provisioning the NATS streams failed (exit ${r.status ?? r.signal ?? r.error}):\n${out}`,
    );
  }
}

function bootstrapAdmin(env) {
  const cli = path.join(ROOT, 'tools', 'deskctl', 'dist', 'src', 'deskctl.js');
  if (!fs.existsSync(cli)) {
    say('admin bootstrap skipped (deskctl not built yet)');
    return;
  }
  say('bootstrapping the admin account (deskctl bootstrap --if-none)');
  const r = spawnSync(
    process.execPath,
    [
      '--disable-proto=throw',
      cli,
      'bootstrap',
      '--email',
      'admin@example.com',
      '--name',
      'Admin',
      '--json',
      '--if-none',
    ],
    { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000, maxBuffer: 8 * 1024 * 1024 },
  );
  const out = `${r.stdout || ''}\n${r.stderr || ''}`;
  if (r.error) {
    say(`admin bootstrap failed (${r.error.message}); continuing`);
    return;
  }
  const key = findKey(parseJsonOutput(r.stdout || ''));
  if (r.status === 0 && key) {
    const line = '='.repeat(72);
    console.log(`\n${paint(['bold', 'yellow'], line)}`);
    console.log(paint('bold', `  Your admin API key (shown once): ${key}`));
    console.log(`  (admin@example.com; store it now, it cannot be shown again)`);
    console.log(`${paint(['bold', 'yellow'], line)}\n`);
    return;
  }
  if (r.status === 0 || /already exist/i.test(out)) {
    say('admin bootstrap skipped (an admin already exists)');
    return;
  }
  const tail = out.trim().split('\n').slice(-10).join('\n');
  say(`admin bootstrap failed (exit ${r.status ?? r.signal}); continuing:\n${tail}`);
}

// ---------------------------------------------------------------------------------------------
// Readiness

function probe(url, timeoutMs = 2000) {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    const req = mod.get(url, { timeout: timeoutMs, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

async function isReady(instance) {
  if (await probe(`http://127.0.0.1:${instance.port}/readyz`)) return true;
  return Boolean(process.env.TLS_CERT) && probe(`https://127.0.0.1:${instance.port}/readyz`);
}

// ---------------------------------------------------------------------------------------------
// Main

const children = new Map(); // name -> { child, exited: Promise }
let shuttingDown = false;

function startService(instance, env, labelWidth) {
  const label = paint(COLORS[instance.service.name], `[${instance.name}]`.padEnd(labelWidth));
  const child = spawnService(ROOT, instance.service.name, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', (err) => {
      console.log(`${label} could not start: ${err.message}`);
      resolve({ code: 127, signal: null });
    });
  });
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on('line', (line) => {
      for (const l of formatLogLine(line).split('\n')) console.log(`${label} ${l}`);
    });
  }
  exited.then(async ({ code, signal }) => {
    // Ctrl-C in a terminal reaches the children too; let our own SIGINT handler win that race.
    await sleep(250);
    if (shuttingDown) return;
    say(
      paint(
        'red',
        `${instance.name} exited unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`}); stopping everything`,
      ),
    );
    void shutdown(1);
  });
  children.set(instance.name, { child, exited });
  return child;
}

async function shutdown(code) {
  if (shuttingDown) return;
  shuttingDown = true;
  const running = [...children.entries()].filter(
    ([, c]) => c.child.exitCode === null && c.child.signalCode === null,
  );
  if (running.length) say(`stopping ${running.map(([n]) => n).join(', ')}...`);
  await Promise.all(
    running.map(([name, c]) =>
      stopProcess(c.child, STOP_TIMEOUT_MS, () => {
        say(`${name} did not stop within ${STOP_TIMEOUT_MS / 1000} s; SIGKILL`);
        c.child.kill('SIGKILL');
      }),
    ),
  );
  say('services stopped. Infra is still running (`npm run infra down` stops it).');
  process.exit(code);
}

/**
 * `--replicas N` or SD_REPLICAS (default 1; 2 with `--cluster`), and `--cluster`: the clustered
 * profile (scripts/infra/clustered.mjs, docs/local-infrastructure.md).
 */
function profile() {
  const { values } = parseArgs({
    options: { replicas: { type: 'string' }, cluster: { type: 'boolean', default: false } },
    strict: true,
  });
  const raw = values.replicas ?? process.env.SD_REPLICAS ?? (values.cluster ? '2' : '1');
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_REPLICAS) {
    console.error(
      `ERROR: --replicas (or SD_REPLICAS) must be an integer from 1 to ${MAX_REPLICAS}, not ${raw}`,
    );
    process.exit(2);
  }
  return { replicas: n, cluster: values.cluster };
}

async function main() {
  const { replicas, cluster } = profile();
  try {
    ensureNodeModules();
  } catch (err) {
    console.error(`ERROR: ${err.message}`);
    process.exit(1);
  }
  if (!buildTypeScript()) {
    console.error('ERROR: `tsc -b` failed; fix the build errors above and run `npm start` again.');
    process.exit(1);
  }

  let urls;
  try {
    urls = await up({ cluster });
  } catch (err) {
    console.error(`ERROR: ${err instanceof InfraError ? err.message : err.stack || err}`);
    process.exit(1);
  }
  const env = { ...process.env, ...urls };
  const keys = principalKeys();
  try {
    provisionStreams(env);
  } catch (err) {
    console.error(`ERROR: ${err.message}`);
    process.exit(1);
  }

  bootstrapAdmin(env);

  const built = SERVICES.filter((svc) => {
    if (fs.existsSync(serviceEntry(ROOT, svc.name))) return true;
    say(`${svc.name}: not built (no services/${svc.name}/dist/src/server.js); skipping`);
    return false;
  });
  if (built.length === 0) {
    say('no service is built yet; nothing to start.');
    process.exit(1);
  }
  const metricsOff = process.env.SD_METRICS_PORT === '0';
  const instances = await stackInstances(built, replicas, (svc, k) => ({
    port: Number(process.env[svc.portVar] || svc.port) + k * REPLICA_PORT_STEP,
    metricsPort: metricsOff ? 0 : svc.metricsPort + k * REPLICA_PORT_STEP,
  }));
  const shared = stackEnvironment(instances);
  // The gateway's upstreams may be given (services run elsewhere).
  for (const { urlVar } of SERVICES) if (urlVar && process.env[urlVar]) shared[urlVar] = process.env[urlVar];

  process.on('SIGINT', () => {
    if (shuttingDown) {
      for (const [, c] of children) c.child.kill('SIGKILL');
      process.exit(130);
    }
    void shutdown(0);
  });
  process.on('SIGTERM', () => void shutdown(0));

  const labelWidth = Math.max(...instances.map((i) => i.name.length)) + 2;
  for (const instance of instances) {
    const own =
      instance.service.name === 'webhooks'
        ? {
            WEBHOOKS_SECRET_KEY: webhooksSecretKey(),
            WEBHOOKS_ALLOWED_RANGES: process.env.WEBHOOKS_ALLOWED_RANGES ?? '127.0.0.0/8,::1/128',
          }
        : {};
    startService(instance, { ...env, ...shared, ...instanceEnvironment(instance, keys), ...own }, labelWidth);
  }

  try {
    await waitUntilReady(instances, {
      isReady: async (instance) => shuttingDown || (await isReady(instance)),
      timeoutMs: READY_TIMEOUT_MS,
      intervalMs: 500,
    });
  } catch (err) {
    if (shuttingDown) return;
    say(paint('red', err.message));
    await shutdown(1);
    return;
  }
  if (shuttingDown) return;
  const scheme = process.env.TLS_CERT ? 'https' : 'http';
  const gateways = instances.filter((i) => i.service.name === 'gateway');
  console.log('');
  if (gateways.length)
    say(
      paint(
        ['bold', 'green'],
        `Support Desk is up: ${gateways.map((g) => `${scheme}://127.0.0.1:${g.port}`).join(', ')}` +
          (replicas > 1 ? ` (${replicas} replicas of every service)` : '') +
          (cluster ? ', on a 3-server NATS JetStream cluster and a Redis Cluster' : ''),
      ),
    );
  else
    say(
      paint(
        ['bold', 'green'],
        `services up (no gateway built): ${instances.map((i) => `${i.name}:${i.port}`).join(', ')}`,
      ),
    );
  say('Ctrl-C stops the services; `npm run infra down` stops Redis/NATS/Mongo.');
}

main().catch((err) => {
  console.error(err.stack || err);
  void shutdown(1);
});
