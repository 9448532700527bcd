import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  instanceEnvironment,
  SERVICES as SERVICE_SPECS,
  type ServiceInstance,
  serviceEntry,
  spawnService,
  stackEnvironment,
  stackInstances,
  stopProcess,
  waitUntilReady,
} from '@support-desk/platform/launch/stack';
import {
  eventually as eventuallyWithin,
  freePort,
  type Teardownable,
  testEnv,
  testPrincipalKeys,
  uniqueName,
} from '@support-desk/platform/testing';
import { request } from './http.js';
import { logFileOf, stackClients, tailOf } from './stack-clients.js';
import { SERVICES, type ServiceName, type Stack, type StackDescriptor } from './stack-types.js';

export { DESKCTL } from './stack-clients.js';
export { SERVICES, type Stack };

export { freePort, type Teardownable };

/** The repository root (this file is test/e2e/dist/src/stack.js once compiled). */
export const ROOT = path.resolve(fileURLToPath(import.meta.url), '../../../../..');

/** Bounds of the harness (not assertions: generous limits so a loaded CI machine still starts). */
const READY_TIMEOUT_MS = Number(process.env.SD_E2E_READY_TIMEOUT_MS ?? 90_000);
const STOP_TIMEOUT_MS = 15_000;

/**
 * What the shared stacks (stack-pool.ts) run with beyond the defaults, and which file needs it:
 * lists.test sees the changes feed at once, scim-conformance.test makes hundreds of SCIM calls,
 * auth.test waits for a key to expire.
 */
export const SHARED_STACK_ENV: Record<string, string> = {
  CHANGES_SETTLE_MS: '0',
  SCIM_RATE_LIMIT: '100000',
  // auth.test's expired key lives 10 s instead of a minute.
  API_KEY_MIN_LIFETIME_SECONDS: '5',
};

const infraEnv = {
  MONGO_URL: testEnv.mongoUrl,
  NATS_URL: testEnv.natsUrl,
  REDIS_URL: testEnv.redisUrl,
};

export interface StackOptions {
  /** Serve the gateway over TLS with this certificate and key (PEM file paths). */
  tls?: { certFile: string; keyFile: string; ca: Buffer };
  /** Extra environment for every service (and deskctl). */
  env?: Record<string, string>;
  /** Processes of every service (default 1); every gateway balances over every replica. */
  replicas?: number;
  /** A stack of this file's own even without options (it stops or restarts services). */
  private?: boolean;
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
 * A stack for this test file. Under `npm test` a file that asks for no options of its own leases
 * one of the run's shared stacks (stack-pool.ts: started once, used by one file at a time, data
 * scoped by `stack.tag`); every other file, and every file run on its own, gets a private stack.
 */
export async function startStack(t: Teardownable, options: StackOptions = {}): Promise<Stack> {
  const shareable = !options.private && !options.tls && !options.env && (options.replicas ?? 1) === 1;
  if (!shareable) return startPrivateStack(t, options);
  if (process.env.SD_E2E_POOL) {
    const { leaseSharedStack } = await import('./stack-pool.js');
    return leaseSharedStack(t, process.env.SD_E2E_POOL);
  }
  // Run on its own: the same settings on a stack of the file's own.
  return startPrivateStack(t, { env: SHARED_STACK_ENV });
}

/**
 * Starts identity, requests, audit, webhooks and the gateway as separate processes (their compiled
 * `dist/src/server.js`) on free loopback ports, with databases, NATS namespace and Redis prefixes
 * of their own; waits for every `/readyz`; stops everything at teardown.
 */
export async function startPrivateStack(t: Teardownable, options: StackOptions = {}): Promise<Stack> {
  const run = uniqueRun();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), `sd-${run}-`));
  const dataDir = path.join(logDir, 'identity-data');
  fs.mkdirSync(dataDir);
  // One instance per service and replica (`requests`, `requests#2`, ...), on free ports.
  const replicas = options.replicas ?? 1;
  const instances = await stackInstances(SERVICE_SPECS, replicas, async () => ({
    port: await freePort(),
    metricsPort: await freePort(),
  }));
  const portsOf = (s: ServiceName) => instances.filter((i) => i.service.name === s).map((i) => i.port);
  const ports = Object.fromEntries(SERVICES.map((s) => [s, portsOf(s)[0]])) as Record<ServiceName, number>;
  const scheme = options.tls ? 'https' : 'http';
  const origins = portsOf('gateway').map((p) => `${scheme}://127.0.0.1:${p}`);
  const origin = origins[0];
  const env: Record<string, string> = {
    ...infraEnv,
    NODE_ENV: 'development',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NATS_NAMESPACE: run,
    RATE_LIMIT_PREFIX: `${run}:`,
    REDIS_KEY_PREFIX: `${run}:gw:`,
    // Every suite call comes from 127.0.0.1, and the suites make hundreds of deliberate 401s:
    // the per-address limit on failed authentications is proven by the gateway's own test
    // (services/gateway/test/auth-failures.test.ts), with a limit low enough to reach.
    AUTH_FAILURES_PER_IP: '100000',
    ...stackEnvironment(instances),
    // This stack's own key for webhook secrets; its receivers listen on loopback.
    WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOKS_ALLOWED_RANGES: '127.0.0.0/8,::1/128',
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
  const instanceEnv = (instance: ServiceInstance): Record<string, string> => ({
    ...env,
    MONGO_DB: `${run}_${instance.service.name}`,
    ...instanceEnvironment(instance, keys),
  });
  // deskctl works on identity's database, like the identity service itself.
  const cliEnv: Record<string, string> = {
    ...env,
    MONGO_DB: `${run}_identity`,
    METRICS_PORT: '0',
    PRINCIPAL_VERIFY_KEYS: keys.verifyKeys,
  };
  delete cliEnv.IDENTITY_PORT;

  const children = new Map<string, ChildProcess>();
  const exits = new Map<string, string>();
  const logFile = (name: string) => logFileOf(logDir, name);

  const tails = () =>
    instances
      .map(
        ({ name }) =>
          `--- ${name} (${logFile(name)})${exits.has(name) ? ` [${exits.get(name)}]` : ''}\n${tailOf(logFile(name))}`,
      )
      .join('\n');

  const stopChild = async (child: ChildProcess) => {
    await stopProcess(child, STOP_TIMEOUT_MS, () => killGroup(child, 'SIGKILL'));
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

  const missing = SERVICES.filter((s) => !fs.existsSync(serviceEntry(ROOT, s)));
  if (missing.length) {
    throw new Error(
      `service(s) not built or not implemented yet: ${missing.map((s) => `services/${s}/dist/src/server.js`).join(', ')} ` +
        '(run `npx tsc -b` at the root)',
    );
  }

  const spawnInstance = (instance: ServiceInstance) => {
    const out = fs.openSync(logFile(instance.name), 'a');
    // Tracing is off unless OTEL_* variables say otherwise, as in every deployment.
    const child = spawnService(ROOT, instance.service.name, {
      env: { ...process.env, ...instanceEnv(instance) },
      stdio: ['ignore', out, out],
      wrap: ['bash', '-c', WATCHDOG, 'sd-e2e-watchdog', String(process.pid)],
      detached: true, // own process group: the SIGKILL fallback reaches the service, not only its watchdog
    });
    const { name } = instance;
    fs.closeSync(out);
    live.add(child);
    children.set(name, child);
    exits.delete(name);
    child.once('exit', (code, signal) => {
      exits.set(name, `exited ${signal ?? code}`);
      live.delete(child);
    });
  };
  // The operator's step before any service starts: the run's streams (services wait for them).
  await provisionRunStreams(run, env);
  for (const instance of instances) spawnInstance(instance);

  const ca = options.tls?.ca;
  const waitReady = async (waiting: ServiceInstance[]) => {
    try {
      await waitUntilReady(waiting, {
        isReady: async (instance) => {
          const url = `${instance.service.name === 'gateway' ? scheme : 'http'}://127.0.0.1:${instance.port}/readyz`;
          return (await request(url, { ca, timeoutMs: 2000 }).catch(() => null))?.status === 200;
        },
        exited: (instance) => exits.get(instance.name),
        timeoutMs: READY_TIMEOUT_MS,
        intervalMs: 150,
      });
    } catch (err) {
      await stop();
      throw new Error(`${(err as Error).message}\n${tails()}`);
    }
  };
  await waitReady(instances);

  /** Stops one instance (SIGTERM: gracefully; SIGKILL: a crash), starts it again, waits until ready. */
  const restart = async (name: string, signal: 'SIGTERM' | 'SIGKILL') => {
    const instance = instances.find((i) => i.name === name);
    const child = children.get(name);
    if (!instance || !child) throw new Error(`no instance ${name}`);
    if (signal === 'SIGTERM') await stopChild(child);
    else {
      const gone = new Promise<void>((r) => child.once('exit', () => r()));
      killGroup(child, 'SIGKILL');
      await gone;
      live.delete(child);
    }
    spawnInstance(instance);
    await waitReady([instance]);
  };

  const descriptor: StackDescriptor = {
    run,
    origin,
    origins,
    ports,
    env: cliEnv,
    logDir,
    instances: instances.map((i) => i.name),
    metricsOrigins: Object.fromEntries(instances.map((i) => [i.name, `http://127.0.0.1:${i.metricsPort}`])),
  };
  return {
    ...stackClients(descriptor, ca),
    tag: run,
    shared: false,
    descriptor,
    restart,
    stopService: async (s) => {
      await Promise.all(
        instances
          .filter((i) => i.service.name === s)
          .map((i) => children.get(i.name) && stopChild(children.get(i.name)!)),
      );
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

/** Provisions the run's NATS streams, as `provision-streams` does for a deployment. */
async function provisionRunStreams(run: string, env: Record<string, string>): Promise<void> {
  const { connectNats, provisionStreams } = await import('@support-desk/platform/messaging');
  const { natsNames } = await import('@support-desk/contracts');
  const nc = await connectNats({ url: env.NATS_URL, name: `e2e-provision-${run}` });
  try {
    // NATS_STREAM_REPLICAS, as provision-streams reads it: 3 on a three-server cluster.
    await provisionStreams(nc, natsNames(run), { replicas: Number(env.NATS_STREAM_REPLICAS ?? 1) });
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/** Drops the run's databases and NATS streams (Redis keys carry TTLs and expire by themselves). */
async function cleanup(run: string, env: Record<string, string>): Promise<void> {
  const { connectMongo } = await import('@support-desk/platform/service');
  const { connectNats, jetstreamApi } = await import('@support-desk/platform/messaging');
  const { natsNames } = await import('@support-desk/contracts');
  for (const s of SERVICES) {
    if (s === 'gateway') continue;
    const conn = await connectMongo({ url: env.MONGO_URL, dbName: `${run}_${s}` });
    await conn.dropDatabase().catch(() => undefined);
    await conn.close();
  }
  const nc = await connectNats({ url: env.NATS_URL, name: `e2e-cleanup-${run}` });
  const names = natsNames(run);
  const jsm = await jetstreamApi(nc);
  await jsm.streams.delete(names.eventsStream).catch(() => undefined);
  await jsm.streams.delete(names.noticesStream).catch(() => undefined);
  await nc.drain().catch(() => undefined);
}
