// A private, real Kubernetes control plane for server-side dry runs: etcd and kube-apiserver on
// free loopback ports, a throw-away data directory, a static admin token, and a kubeconfig that
// every kubectl and helm call is given explicitly (kubectl's default, localhost:8080, is the
// gateway's port here).
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { tailFile, waitFor } from '../infra/probes.mjs';
import { bin } from './tools.mjs';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 120_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Waits until `check` passes; fails with the process's log if it exits or time runs out. */
async function waitUntil(what, check, child, logFile) {
  const ready = await waitFor(() => check().catch(() => false), {
    timeoutMs: START_TIMEOUT_MS,
    abort: () =>
      child.exitCode !== null ? `${what} exited (${child.exitCode}):\n${tailFile(logFile, 15)}` : null,
  });
  if (!ready)
    throw new Error(`${what} not ready within ${START_TIMEOUT_MS / 1000} s:\n${tailFile(logFile, 15)}`);
}

export async function httpOk(url, headers = {}) {
  // The API server's certificate is self-signed and generated at start: skip verification for
  // this loopback-only readiness poll (kubectl uses the kubeconfig below).
  const { request } = await import(url.startsWith('https') ? 'node:https' : 'node:http');
  return new Promise((resolve) => {
    const req = request(url, { headers, rejectUnauthorized: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** `{ 'data-dir': d, flag: true }` → `['--data-dir=d', '--flag']`. */
export function flags(options) {
  return Object.entries(options).map(([k, v]) => (v === true ? `--${k}` : `--${k}=${v}`));
}

/**
 * Starts one of the tools with its log in `dir`. `wrap` prefixes the command (the cluster runs
 * its processes inside namespaces of its own through nsenter); `detached` leaves it running
 * after this process exits, with a pidfile beside the log (the cluster's `down` reads it).
 */
export function startProcess(name, args, dir, { wrap = [], detached = false, binary = bin(name) } = {}) {
  const logFile = path.join(dir, `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  const [cmd, ...rest] = [...wrap, binary, ...args];
  const child = spawn(cmd, rest, { stdio: ['ignore', out, out], detached });
  fs.closeSync(out);
  if (detached) {
    child.unref();
    fs.writeFileSync(path.join(dir, `${name}.pid`), `${child.pid}\n`);
  }
  return { child, logFile, waitUntil: (what, check) => waitUntil(what, check, child, logFile) };
}

/** A kubeconfig for `user` with a bearer token, trusting the API server's certificate. */
export function writeKubeconfig(file, { server, ca, user, token }) {
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server, 'certificate-authority': ca } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'local', context: { cluster: 'local', user } }],
      'current-context': 'local',
    }),
    { mode: 0o600 },
  );
}

/**
 * Starts etcd and kube-apiserver; `stop()` kills both and removes their data.
 * The server-side dry run calls it bare: a throw-away directory, free loopback ports, an admin
 * token. The cluster (scripts/cluster.mjs) passes its own directory and address (inside its
 * network namespace), more users (its components' tokens) and API server flags, and runs both
 * detached.
 */
export async function startControlPlane({
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-kube-')),
  host = HOST,
  ports,
  users = [],
  apiFlags = {},
  launch = {},
} = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const children = [];
  const stop = async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const { etcdClientPort, etcdPeerPort, apiPort } = ports ?? {
      etcdClientPort: await freePort(),
      etcdPeerPort: await freePort(),
      apiPort: await freePort(),
    };
    const etcdClient = `http://${host}:${etcdClientPort}`;
    const etcdPeer = `http://${host}:${etcdPeerPort}`;
    const etcd = startProcess(
      'etcd',
      flags({
        'data-dir': path.join(dir, 'etcd'),
        'listen-client-urls': etcdClient,
        'advertise-client-urls': etcdClient,
        'listen-peer-urls': etcdPeer,
        'initial-advertise-peer-urls': etcdPeer,
        'initial-cluster': `default=${etcdPeer}`,
        'unsafe-no-fsync': true,
      }),
      dir,
      launch,
    );
    children.push(etcd.child);
    await etcd.waitUntil('etcd', () => httpOk(`${etcdClient}/health`));

    const token = crypto.randomBytes(24).toString('hex');
    const admin = { user: 'check-admin', groups: ['system:masters'], token };
    fs.writeFileSync(
      path.join(dir, 'tokens.csv'),
      [admin, ...users]
        .map((u) => `${u.token},${u.user},${u.user}${u.groups.length ? `,"${u.groups.join(',')}"` : ''}\n`)
        .join(''),
    );
    execFileSync('openssl', ['genrsa', '-out', path.join(dir, 'sa.key'), '2048'], { stdio: 'ignore' });
    const api = startProcess(
      'kube-apiserver',
      flags({
        'etcd-servers': etcdClient,
        'bind-address': host,
        'advertise-address': host,
        // A loopback advertise address is refused by the endpoint reconciler; the dry run needs none.
        ...(host === HOST ? { 'endpoint-reconciler-type': 'none' } : {}),
        'secure-port': apiPort,
        'cert-dir': path.join(dir, 'certs'),
        'token-auth-file': path.join(dir, 'tokens.csv'),
        'authorization-mode': 'RBAC',
        'service-account-issuer': 'https://kubernetes.default.svc',
        'service-account-key-file': path.join(dir, 'sa.key'),
        'service-account-signing-key-file': path.join(dir, 'sa.key'),
        'service-cluster-ip-range': '10.96.0.0/16',
        ...apiFlags,
      }),
      dir,
      launch,
    );
    children.push(api.child);
    const server = `https://${host}:${apiPort}`;
    const auth = { authorization: `Bearer ${token}` };
    await api.waitUntil('kube-apiserver', () => httpOk(`${server}/readyz`, auth));

    const ca = path.join(dir, 'certs', 'apiserver.crt');
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeKubeconfig(kubeconfig, { server, ca, user: admin.user, token });
    return { server, ca, kubeconfig, saKey: path.join(dir, 'sa.key'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
