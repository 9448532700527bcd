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
const START_TIMEOUT_MS = 60_000;

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

async function httpOk(url, headers = {}) {
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
function flags(options) {
  return Object.entries(options).map(([k, v]) => (v === true ? `--${k}` : `--${k}=${v}`));
}

function startProcess(name, args, dir) {
  const logFile = path.join(dir, `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  const child = spawn(bin(name), args, { stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return { child, logFile };
}

/** Starts etcd and kube-apiserver; `stop()` kills both and removes their data. */
export async function startControlPlane() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sd-kube-'));
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
    const [clientPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdClient = `http://${HOST}:${clientPort}`;
    const etcdPeer = `http://${HOST}:${peerPort}`;
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
    );
    children.push(etcd.child);
    await waitUntil('etcd', () => httpOk(`${etcdClient}/health`), etcd.child, etcd.logFile);

    const token = crypto.randomBytes(24).toString('hex');
    fs.writeFileSync(path.join(dir, 'tokens.csv'), `${token},check-admin,check-admin,system:masters\n`);
    execFileSync('openssl', ['genrsa', '-out', path.join(dir, 'sa.key'), '2048'], { stdio: 'ignore' });
    const api = startProcess(
      'kube-apiserver',
      flags({
        'etcd-servers': etcdClient,
        'bind-address': HOST,
        'advertise-address': HOST,
        // A loopback advertise address is refused by the endpoint reconciler; nothing here needs it.
        'endpoint-reconciler-type': 'none',
        'secure-port': apiPort,
        'cert-dir': path.join(dir, 'certs'),
        'token-auth-file': path.join(dir, 'tokens.csv'),
        'authorization-mode': 'RBAC',
        'service-account-issuer': 'https://kubernetes.default.svc',
        'service-account-key-file': path.join(dir, 'sa.key'),
        'service-account-signing-key-file': path.join(dir, 'sa.key'),
        'service-cluster-ip-range': '10.96.0.0/16',
      }),
      dir,
    );
    children.push(api.child);
    const server = `https://${HOST}:${apiPort}`;
    const auth = { authorization: `Bearer ${token}` };
    await waitUntil('kube-apiserver', () => httpOk(`${server}/readyz`, auth), api.child, api.logFile);

    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'check',
            cluster: { server, 'certificate-authority': path.join(dir, 'certs', 'apiserver.crt') },
          },
        ],
        users: [{ name: 'check-admin', user: { token } }],
        contexts: [{ name: 'check', context: { cluster: 'check', user: 'check-admin' } }],
        'current-context': 'check',
      }),
      { mode: 0o600 },
    );
    return { server, kubeconfig, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
