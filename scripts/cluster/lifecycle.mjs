// `up`, `down` and `status` of the single-node cluster (see scripts/cluster.mjs).
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { flags, httpOk, startControlPlane, startProcess, writeKubeconfig } from '../deploy/apiserver.mjs';
import { bin, ensureClusterTools } from '../deploy/tools.mjs';
import { stopPid } from '../infra/launcher.mjs';
import { isRoot } from '../infra/packages.mjs';
import { cmdlineOf, findBinary, livePidFromFile } from '../infra/probes.mjs';
import { componentUsers, makeKubeletClientCert, RBAC } from './access.mjs';
import { inCluster } from './config.mjs';
import { ensureImages, importImages } from './images.mjs';
import { createNamespaces, removeNamespaces } from './network.mjs';
import {
  ensurePackages,
  writeContainerdConfig,
  writeCorefile,
  writeKubeletConfig,
  writeKubeProxyConfig,
} from './node.mjs';

const log = (...args) => console.log('[cluster]', ...args);

/** In start order; `down` stops them in reverse. */
export const COMPONENTS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'containerd',
  'kubelet',
  'kube-proxy',
  'coredns',
  'kube-router',
];

const pidFile = (c, name) =>
  path.join(c.dir, name === 'etcd' || name === 'kube-apiserver' ? 'control-plane' : 'node', `${name}.pid`);
const livePid = (c, name) => livePidFromFile(pidFile(c, name), name);

export function kubectl(c, args, input) {
  return execFileSync(bin('kubectl'), ['--kubeconfig', c.kubeconfig, ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function nodeReady(c) {
  try {
    const out = kubectl(c, [
      'get',
      'node',
      c.nodeName,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    return out.trim() === 'True';
  } catch {
    return false;
  }
}

export async function up(c) {
  const running = COMPONENTS.filter((name) => livePid(c, name));
  if (running.length === COMPONENTS.length && fs.existsSync(c.stateFile)) {
    log(`already up (${c.dir}); kubeconfig ${c.kubeconfig}`);
    return JSON.parse(fs.readFileSync(c.stateFile, 'utf8'));
  }
  if (running.length) log(`only ${running.join(', ')} of the cluster running: starting it anew`);
  if (!isRoot())
    throw new Error('the cluster needs root (network and mount namespaces, containerd, the kubelet)');
  // What a crashed or killed run of this data directory left (a namespace of the same index but
  // no directory is another clone's: createNamespaces refuses it).
  if (fs.existsSync(c.dir)) await down(c);
  const started = Date.now();
  ensurePackages();
  ensureClusterTools();
  const images = ensureImages();
  const prepared = Date.now();

  const cpDir = path.join(c.dir, 'control-plane');
  const nodeDir = path.join(c.dir, 'node');
  fs.mkdirSync(nodeDir, { recursive: true });
  createNamespaces(c);
  const at = (what) => log(`${what} at ${((Date.now() - prepared) / 1000).toFixed(1)} s`);
  const launch = { wrap: inCluster(c), detached: true };
  try {
    const pki = makeKubeletClientCert(nodeDir);
    const users = componentUsers(c);
    const cp = await startControlPlane({
      dir: cpDir,
      host: c.nodeIp,
      ports: c.ports,
      users: Object.values(users),
      launch,
      apiFlags: {
        'authorization-mode': 'Node,RBAC',
        'enable-admission-plugins': 'NodeRestriction',
        // Privileged pods are allowed by the cluster, so that a namespace's Pod Security level is
        // what refuses them.
        'allow-privileged': true,
        'service-cluster-ip-range': c.serviceCidr,
        'kubelet-client-certificate': pki.cert,
        'kubelet-client-key': pki.key,
        'kubelet-preferred-address-types': 'InternalIP',
      },
    });
    at('etcd and kube-apiserver ready');
    fs.copyFileSync(cp.kubeconfig, c.kubeconfig);
    const kubeconfigOf = (name) => {
      const file = path.join(nodeDir, `${name}.kubeconfig`);
      writeKubeconfig(file, { server: cp.server, ca: cp.ca, ...users[name] });
      return file;
    };
    kubectl(c, ['apply', '-f', '-'], RBAC);

    const healthy = (url) => () => httpOk(url);
    const cm = startProcess(
      'kube-controller-manager',
      flags({
        kubeconfig: kubeconfigOf('kube-controller-manager'),
        'bind-address': c.nodeIp,
        'secure-port': c.controllerManagerPort,
        'leader-elect': 'false',
        'service-account-private-key-file': cp.saKey,
        'root-ca-file': cp.ca,
        'use-service-account-credentials': 'true',
        'service-cluster-ip-range': c.serviceCidr,
      }),
      nodeDir,
      launch,
    );
    const scheduler = startProcess(
      'kube-scheduler',
      flags({
        kubeconfig: kubeconfigOf('kube-scheduler'),
        'bind-address': c.nodeIp,
        'secure-port': c.schedulerPort,
        'leader-elect': 'false',
      }),
      nodeDir,
      launch,
    );
    const containerdConfig = writeContainerdConfig(c, images.pause.ref);
    const containerd = startProcess('containerd', ['--config', containerdConfig.config], nodeDir, {
      ...launch,
      binary: findBinary('containerd'),
    });
    await cm.waitUntil(
      'kube-controller-manager',
      healthy(`https://${c.nodeIp}:${c.controllerManagerPort}/healthz`),
    );
    await scheduler.waitUntil('kube-scheduler', healthy(`https://${c.nodeIp}:${c.schedulerPort}/healthz`));
    const ctr = ['--address', containerdConfig.socket];
    await containerd.waitUntil(
      'containerd',
      async () => spawnSync('ctr', [...ctr, 'version'], { stdio: 'ignore' }).status === 0,
    );
    at('controller manager, scheduler and containerd ready');
    importImages(images, containerdConfig.socket);

    const kubeletConfig = writeKubeletConfig(c, { socket: containerdConfig.socket, clientCa: pki.ca });
    const kubelet = startProcess(
      'kubelet',
      flags({
        config: kubeletConfig.config,
        kubeconfig: kubeconfigOf('kubelet'),
        'root-dir': kubeletConfig.rootDir,
        'cert-dir': kubeletConfig.certDir,
        'hostname-override': c.nodeName,
        'node-ip': c.nodeIp,
      }),
      nodeDir,
      launch,
    );
    await kubelet.waitUntil('kubelet', healthy(`http://${c.nodeIp}:${c.kubeletHealthzPort}/healthz`));
    at('kubelet healthy');
    const proxy = startProcess(
      'kube-proxy',
      flags({ config: writeKubeProxyConfig(c, kubeconfigOf('kube-proxy')) }),
      nodeDir,
      launch,
    );
    const dns = startProcess(
      'coredns',
      ['-conf', writeCorefile(c, kubeconfigOf('coredns'))],
      nodeDir,
      launch,
    );
    await proxy.waitUntil('kube-proxy', healthy(`http://${c.nodeIp}:${c.proxyHealthzPort}/healthz`));
    await dns.waitUntil('coredns', healthy(`http://${c.nodeIp}:${c.dnsHealthPort + 1}/ready`));
    at('kube-proxy and CoreDNS ready');
    await kubelet.waitUntil('node Ready', async () => nodeReady(c));
    // kube-router's firewall only: pods are connected by the bridge plugin and Services by
    // kube-proxy. It reads the Node at its start, so it starts last.
    const firewall = startProcess(
      'kube-router',
      flags({
        kubeconfig: kubeconfigOf('kube-router'),
        'hostname-override': c.nodeName,
        'run-firewall': 'true',
        'run-router': 'false',
        'run-service-proxy': 'false',
        'service-cluster-ip-range': c.serviceCidr,
        'health-port': c.firewallHealthPort,
        'metrics-port': 0,
      }),
      nodeDir,
      launch,
    );
    await firewall.waitUntil('kube-router', healthy(`http://${c.nodeIp}:${c.firewallHealthPort}/healthz`));
    at('kube-router ready');

    const state = {
      kubeconfig: c.kubeconfig,
      server: cp.server,
      nodeName: c.nodeName,
      nodeIp: c.nodeIp,
      dnsIp: c.nodeIp,
      serviceCidr: c.serviceCidr,
      podCidr: c.podCidr,
      netns: c.netns,
      containerdSocket: containerdConfig.socket,
      kubectl: bin('kubectl'),
      images: Object.fromEntries(Object.entries(images).map(([name, { ref }]) => [name, ref])),
      startSeconds: Math.round((Date.now() - prepared) / 100) / 10,
    };
    fs.writeFileSync(c.stateFile, JSON.stringify(state, null, 2));
    log(
      `up in ${state.startSeconds} s (plus ${((prepared - started) / 1000).toFixed(1)} s for tools and images); ` +
        `kubeconfig ${c.kubeconfig}`,
    );
    return state;
  } catch (err) {
    log(`start failed: ${err.message}`);
    await down(c);
    throw err;
  }
}

/** Kills every container task in the cluster's containerd, so its shims exit with them. */
function killContainers(c) {
  const socket = path.join(c.dir, 'containerd', 'containerd.sock');
  const ctr = (args) =>
    spawnSync('ctr', ['--address', socket, '--namespace', 'k8s.io', ...args], { encoding: 'utf8' });
  if (livePid(c, 'containerd')) {
    const tasks = (ctr(['tasks', 'ls', '-q']).stdout || '').split('\n').filter(Boolean);
    for (const id of tasks) ctr(['tasks', 'kill', '--all', '--signal', 'SIGKILL', id]);
    for (const id of tasks) ctr(['tasks', 'delete', '--force', id]);
  }
  // Shims whose containerd is gone (a crashed run) are found by the socket they were given.
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    const cmd = cmdlineOf(Number(pid));
    if (cmd?.[0]?.includes('containerd-shim') && cmd.includes(socket)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

export async function down(c) {
  for (const name of [...COMPONENTS].reverse()) {
    if (name === 'containerd') killContainers(c);
    const pid = livePid(c, name);
    if (pid) {
      await stopPid(pid, name, name);
      log(`stopped ${name} (pid ${pid})`);
    }
  }
  removeNamespaces(c);
  fs.rmSync(c.dir, { recursive: true, force: true });
  log(`down (${c.dir} removed)`);
}

export async function status(c) {
  const components = COMPONENTS.map((name) => ({ name, pid: livePid(c, name) }));
  const ready = components.every((x) => x.pid) && nodeReady(c);
  return { components, ready, kubeconfig: c.kubeconfig };
}
