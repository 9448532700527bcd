// How Support Desk launches its five services, in one place for `npm start` (scripts/start.mjs)
// and for the end-to-end stacks and the benches (test/e2e/src/stack.ts): which processes a stack
// has, the environment each gets, the command that runs one, when they are ready and how they
// stop. Plain JavaScript with a declaration file, like servers.mjs: `npm start` runs it before
// anything else is compiled.
import { spawn } from 'node:child_process';
import path from 'node:path';

/** The services in start order, with their port variables and development ports. */
export const SERVICES = [
  { name: 'identity', portVar: 'IDENTITY_PORT', urlVar: 'IDENTITY_URL', port: 8082, metricsPort: 9482 },
  { name: 'requests', portVar: 'REQUESTS_PORT', urlVar: 'REQUESTS_URL', port: 8081, metricsPort: 9481 },
  { name: 'audit', portVar: 'AUDIT_PORT', urlVar: 'AUDIT_URL', port: 8083, metricsPort: 9483 },
  { name: 'webhooks', portVar: 'WEBHOOKS_PORT', urlVar: 'WEBHOOKS_URL', port: 8084, metricsPort: 9484 },
  { name: 'gateway', portVar: 'GATEWAY_PORT', urlVar: null, port: 8080, metricsPort: 9480 },
];

/**
 * One process per service and replica, named `requests`, `requests#2`, …; `place(service, k)`
 * gives replica k's (0-based) ports.
 */
export async function stackInstances(services, replicas, place) {
  const instances = [];
  for (const service of services)
    for (let k = 0; k < replicas; k++) {
      const { port, metricsPort } = await place(service, k);
      instances.push({
        name: k === 0 ? service.name : `${service.name}#${k + 1}`,
        service,
        port,
        metricsPort,
      });
    }
  return instances;
}

/**
 * What every process of a stack shares: each service's first port, the gateway's upstream URLs
 * (every replica of each service: it balances over them) and, with several replicas, the local
 * store's cross-process write locks (aggregate-lock.ts; MongoDB needs none, the variable is
 * harmless there).
 */
export function stackEnvironment(instances) {
  const env = {};
  for (const service of SERVICES) {
    const own = instances.filter((i) => i.service.name === service.name);
    if (own.length === 0) continue;
    env[service.portVar] = String(own[0].port);
    if (service.urlVar) env[service.urlVar] = own.map((i) => `http://127.0.0.1:${i.port}`).join(',');
  }
  if (instances.some((i) => i.name.includes('#'))) env.STORE_WRITE_LOCKS = 'true';
  return env;
}

/**
 * One process's own environment: its ports, and its side of the principal key pair (only the
 * gateway holds the private key; the services verify what it signs with the public one).
 */
export function instanceEnvironment(instance, keys) {
  return {
    PORT: String(instance.port),
    [instance.service.portVar]: String(instance.port),
    METRICS_PORT: String(instance.metricsPort),
    ...(instance.service.name === 'gateway'
      ? { PRINCIPAL_SIGNING_KEY: keys.signingKey }
      : { PRINCIPAL_VERIFY_KEYS: keys.verifyKeys }),
  };
}

/** A service's built entry point. */
export const serviceEntry = (root, name) => path.join(root, 'services', name, 'dist', 'src', 'server.js');

/** Node's arguments for a service: tracing loaded before it (libs/platform/src/telemetry/preload.ts). */
export const serviceArgs = (root, name) => [
  '--disable-proto=throw',
  '--import',
  '@support-desk/platform/telemetry',
  serviceEntry(root, name),
];

/** Starts a service's process (`wrap` puts a command before node, e.g. a watchdog). */
export function spawnService(root, name, { env, stdio, wrap = [], detached = false }) {
  const [cmd, ...args] = [...wrap, process.execPath, ...serviceArgs(root, name)];
  return spawn(cmd, args, { cwd: root, env, stdio, detached });
}

/**
 * Waits until `isReady(instance)` for every instance, checking each every `intervalMs`. Throws
 * when one has exited (`exited(instance)` gives why) or at the deadline, naming the ones not ready.
 */
export async function waitUntilReady(instances, { isReady, exited = () => null, timeoutMs, intervalMs }) {
  const deadline = Date.now() + timeoutMs;
  const notReady = new Set(instances);
  for (;;) {
    for (const instance of [...notReady]) {
      const why = exited(instance);
      if (why) throw new Error(`${instance.name} ${why} before it was ready`);
    }
    await Promise.all(
      [...notReady].map(async (instance) => {
        if (await isReady(instance)) notReady.delete(instance);
      }),
    );
    if (notReady.size === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `not ready after ${timeoutMs / 1000} s: ${[...notReady].map((i) => i.name).join(', ')} (GET /readyz != 200)`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Stops a process as a deployment does: SIGTERM (a graceful shutdown), then `kill` (SIGKILL by
 * default) after `timeoutMs` if it is still running. Resolves once it has exited.
 */
export async function stopProcess(child, timeoutMs, kill = () => child.kill('SIGKILL')) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(kill, timeoutMs);
  await gone;
  clearTimeout(timer);
}
