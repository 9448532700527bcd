import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  eventually as eventuallyWithin,
  freePort,
  type Teardownable,
  testEnv,
  testPrincipalKeys,
  uniqueName,
} from '@support-desk/platform/testing';
import { Api, request, type Json } from './http.js';

export { freePort, type Teardownable };

/** The repository root (this file is test/e2e/dist/src/stack.js once compiled). */
export const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../../../..');

export const SERVICES = ['identity', 'requests', 'audit', 'gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Bounds of the harness (not assertions: generous limits so a loaded CI machine still starts). */
const READY_TIMEOUT_MS = Number(process.env.SD_E2E_READY_TIMEOUT_MS ?? 90_000);
const STOP_TIMEOUT_MS = 15_000;
const DESKCTL_TIMEOUT_MS = 60_000;
const SEED_TIMEOUT_MS = 240_000;

export const infraEnv = {
  MONGO_URL: testEnv.mongoUrl,
  NATS_URL: testEnv.natsUrl,
  REDIS_URL: testEnv.redisUrl,
};

export interface StackOptions {
  /** Serve the gateway over TLS with this certificate and key (PEM file paths). */
  tls?: { certFile: string; keyFile: string; ca: Buffer };
  /** Extra environment for every service (and deskctl). */
  env?: Record<string, string>;
}

export interface DeskctlResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: Json;
}

export interface Stack {
  /** Unique name of this run: database prefix, NATS namespace, Redis prefixes. */
  run: string;
  /** Gateway origin, e.g. `http://127.0.0.1:41234` (the OAuth endpoints live here). */
  origin: string;
  /** `{base_url}` of the spec: origin + `/v1`. */
  base: string;
  ports: Record<ServiceName, number>;
  /** The environment shared by the services and deskctl. */
  env: Record<string, string>;
  ca?: Buffer;
  logDir: string;
  api(token: string | null): Api;
  /** Runs `deskctl <args> --json` against this stack. */
  deskctl(args: string[], options?: { stdin?: string; json?: boolean }): Promise<DeskctlResult>;
  /** Runs `sd-seed <args> --json` (the demo seeder) against this stack. */
  seed(args: string[], options?: { json?: boolean }): Promise<DeskctlResult>;
  /** Like `deskctl` but throws (with stderr) unless it exits 0 with JSON on stdout. */
  deskctlJson(args: string[], options?: { stdin?: string }): Promise<Json>;
  logTail(service: ServiceName, lines?: number): string;
  /** Stops one service (SIGTERM, bounded), e.g. to see the gateway answer for an unreachable upstream. */
  stopService(service: ServiceName): Promise<void>;
  stop(): Promise<void>;
}

export const uniqueRun = (prefix = 'e2e'): string => uniqueName(prefix);

/**
 * "At once" for credential cut-offs (revocation, deactivation, role change): the gateway caches
 * credentials for 30 s, so a refusal within this bound proves the notice path, not cache expiry.
 * Not a speed measurement; generous for a loaded CI machine.
 */
export const AT_ONCE_MS = 5000;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The platform's `eventually`, with the stack's more patient defaults (whole processes answer). */
export const eventually = <T>(
  check: Parameters<typeof eventuallyWithin<T>>[0],
  options: Parameters<typeof eventuallyWithin<T>>[1] = {},
) => eventuallyWithin<T>(check, { timeoutMs: 15_000, intervalMs: 100, ...options });

function tailOf(file: string, lines = 40): string {
  try {
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(-lines - 1)
      .join('\n');
  } catch {
    return '(no log)';
  }
}

/** Signals a service's whole process group (its watchdog and the service). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});

/**
 * Starts identity, requests, audit and the gateway as separate processes (their compiled
 * `dist/src/server.js`) on free loopback ports, with databases, NATS namespace and Redis prefixes
 * of their own; waits for every `/readyz`; stops everything at teardown.
 */
export async function startStack(t: Teardownable, options: StackOptions = {}): Promise<Stack> {
  const run = uniqueRun();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), `sd-${run}-`));
  const dataDir = path.join(logDir, 'identity-data');
  fs.mkdirSync(dataDir);
  const ports = {} as Record<ServiceName, number>;
  for (const s of SERVICES) ports[s] = await freePort();
  const scheme = options.tls ? 'https' : 'http';
  const origin = `${scheme}://127.0.0.1:${ports.gateway}`;
  const env: Record<string, string> = {
    ...infraEnv,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NATS_NAMESPACE: run,
    RATE_LIMIT_PREFIX: `${run}:`,
    REDIS_KEY_PREFIX: `${run}:gw:`,
    GATEWAY_PORT: String(ports.gateway),
    REQUESTS_PORT: String(ports.requests),
    IDENTITY_PORT: String(ports.identity),
    AUDIT_PORT: String(ports.audit),
    REQUESTS_URL: `http://127.0.0.1:${ports.requests}`,
    IDENTITY_URL: `http://127.0.0.1:${ports.identity}`,
    AUDIT_URL: `http://127.0.0.1:${ports.audit}`,
    OAUTH_ISSUER: origin,
    PUBLIC_BASE_URL: `${origin}/v1`,
    IDENTITY_DATA_DIR: dataDir,
    ...options.env,
  };
  if (options.tls) {
    env.TLS_CERT = options.tls.certFile;
    env.TLS_KEY = options.tls.keyFile;
  }
  // A key pair of this stack's own: the gateway signs with the private key, the others verify.
  const keys = testPrincipalKeys();
  const serviceEnv = (s: ServiceName): Record<string, string> => ({
    ...env,
    MONGO_DB: `${run}_${s}`,
    PORT: String(ports[s]),
    ...(s === 'gateway'
      ? { PRINCIPAL_SIGNING_KEY: keys.signingKey }
      : { PRINCIPAL_VERIFY_KEYS: keys.verifyKeys }),
  });
  // deskctl works on identity's database, like the identity service itself.
  const cliEnv = serviceEnv('identity');
  delete cliEnv.PORT;

  const children = new Map<ServiceName, ChildProcess>();
  const exits = new Map<ServiceName, string>();
  const logFile = (s: ServiceName) => path.join(logDir, `${s}.log`);

  const tails = () =>
    SERVICES.map(
      (s) => `--- ${s} (${logFile(s)})${exits.has(s) ? ` [${exits.get(s)}]` : ''}\n${tailOf(logFile(s))}`,
    ).join('\n');

  const stopChild = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
    await gone;
    clearTimeout(timer);
    live.delete(child);
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await Promise.all([...children.values()].map(stopChild));
  };

  // tap's per-file timeout kills the process (SIGALRM) before any teardown: show the logs first.
  process.once('SIGALRM', () => console.error(`\n[e2e ${run}] service logs (timed out):\n${tails()}`));
  t.teardown(async () => {
    if (t.passing && !t.passing()) console.error(`\n[e2e ${run}] service logs (failing run):\n${tails()}`);
    await stop();
    await cleanup(run, env).catch(() => undefined);
  });

  const missing = SERVICES.filter(
    (s) => !fs.existsSync(path.join(ROOT, 'services', s, 'dist/src/server.js')),
  );
  if (missing.length) {
    throw new Error(
      `service(s) not built or not implemented yet: ${missing.map((s) => `services/${s}/dist/src/server.js`).join(', ')} ` +
        '(run `npx tsc -b` at the root)',
    );
  }

  for (const s of SERVICES) {
    const out = fs.openSync(logFile(s), 'a');
    const child = spawn(
      'bash',
      [
        '-c',
        WATCHDOG,
        'sd-e2e-watchdog',
        String(process.pid),
        process.execPath,
        path.join(ROOT, 'services', s, 'dist/src/server.js'),
      ],
      {
        cwd: ROOT,
        env: { ...process.env, ...serviceEnv(s) },
        stdio: ['ignore', out, out],
        detached: true, // own process group: the SIGKILL fallback reaches the service, not only its watchdog
      },
    );
    fs.closeSync(out);
    live.add(child);
    children.set(s, child);
    child.once('exit', (code, signal) => {
      exits.set(s, `exited ${signal ?? code}`);
      live.delete(child);
    });
  }

  const ca = options.tls?.ca;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const notReady = new Set<ServiceName>(SERVICES);
  while (notReady.size > 0) {
    for (const s of [...notReady]) {
      if (exits.has(s)) {
        await stop();
        throw new Error(`${s} ${exits.get(s)} before it was ready\n${tails()}`);
      }
      const url = s === 'gateway' ? `${origin}/readyz` : `http://127.0.0.1:${ports[s]}/readyz`;
      const res = await request(url, { ca, timeoutMs: 2000 }).catch(() => null);
      if (res?.status === 200) notReady.delete(s);
    }
    if (notReady.size === 0) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`not ready after ${READY_TIMEOUT_MS} ms: ${[...notReady].join(', ')}\n${tails()}`);
    }
    await sleep(150);
  }

  const deskctl: Stack['deskctl'] = (args, opts = {}) =>
    runCli(DESKCTL, opts.json === false ? args : [...args, '--json'], { ...process.env, ...cliEnv }, opts);
  // The seeder runs deskctl with its own environment: the stack's, and progress files of its own.
  const seedEnv = { ...process.env, ...cliEnv, SD_SEED_STATE_DIR: path.join(logDir, 'seed') };
  const seed: Stack['seed'] = (args, opts = {}) =>
    runCli(SD_SEED, opts.json === false ? args : [...args, '--json'], seedEnv, {
      timeoutMs: SEED_TIMEOUT_MS,
    });

  return {
    run,
    origin,
    base: `${origin}/v1`,
    ports,
    env: cliEnv,
    ca,
    logDir,
    api: (token) => new Api(origin, token, ca),
    deskctl,
    seed,
    async deskctlJson(args, opts = {}) {
      const r = await deskctl(args, opts);
      if (r.code !== 0 || r.json === undefined) {
        throw new Error(
          `deskctl ${args.join(' ')} --json: exit ${r.code}\nstderr: ${r.stderr.trim()}\nstdout: ${r.stdout.trim().slice(0, 500)}`,
        );
      }
      return r.json;
    },
    logTail: (s, lines) => tailOf(logFile(s), lines),
    stopService: async (s) => {
      const child = children.get(s);
      if (child) await stopChild(child);
    },
    stop,
  };
}

/**
 * Runs a service under a tiny bash watchdog: SIGTERM is passed on (graceful shutdown), the exit
 * status is the service's, and if the test process disappears without its teardown (killed by
 * tap's timeout, a crash) the service is stopped too instead of lingering on its port.
 * Arguments: parent pid, node, server script.
 */
const WATCHDOG = `
parent=$1; shift
"$@" &
pid=$!
trap 'kill -TERM $pid 2>/dev/null' TERM INT
while kill -0 $pid 2>/dev/null; do
  if ! kill -0 "$parent" 2>/dev/null; then
    kill -TERM $pid 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 $pid 2>/dev/null || break; sleep 1; done
    kill -KILL $pid 2>/dev/null
    break
  fi
  sleep 1 & wait $!
done
wait $pid
`;

export const DESKCTL = path.join(ROOT, 'services/identity/dist/src/cli/deskctl.js');
export const SD_SEED = path.join(ROOT, 'tools/seed/dist/src/cli.js');

/** Runs one of the project's CLIs (deskctl, sd-seed) with the stack's environment, bounded in time. */
function runCli(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  { stdin, timeoutMs = DESKCTL_TIMEOUT_MS }: { stdin?: string; timeoutMs?: number } = {},
): Promise<DeskctlResult> {
  if (!fs.existsSync(script)) {
    return Promise.resolve({
      code: 127,
      stdout: '',
      stderr: `${path.basename(script)} is not built (${path.relative(ROOT, script)} missing; run npx tsc -b)`,
      json: undefined,
    });
  }
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => {
      stderr += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = stdout.trim() ? JSON.parse(stdout) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin ?? '');
  });
}

/** Drops the run's databases and NATS streams (Redis keys carry TTLs and expire by themselves). */
async function cleanup(run: string, env: Record<string, string>): Promise<void> {
  const { connectMongo, connectNats, ensureStreams } = await import('@support-desk/platform');
  const { natsNames } = await import('@support-desk/contracts');
  for (const s of SERVICES) {
    if (s === 'gateway') continue;
    const conn = await connectMongo({ url: env.MONGO_URL, dbName: `${run}_${s}` });
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  }
  const nc = await connectNats({ url: env.NATS_URL, name: `e2e-cleanup-${run}` });
  const names = natsNames(run);
  const jsm = await ensureStreams(nc, names);
  await jsm.streams.delete(names.eventsStream).catch(() => undefined);
  await jsm.streams.delete(names.noticesStream).catch(() => undefined);
  await nc.drain().catch(() => undefined);
}
