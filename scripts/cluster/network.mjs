// The cluster's namespaces. Network: `ip netns add`, a veth pair (host `sd-kube<i>` 10.255.<i>.1,
// node 10.255.<i>.2), IP forwarding inside the namespace only, and one host route (the Service
// range, through the node). No default route inside: nothing from a pod can leave the machine.
// Mount: a private mount namespace bound to a file, shared by containerd and the kubelet (so the
// volumes the kubelet mounts are the ones runc sees), where every mount of theirs (overlay
// snapshots, tmpfs volumes, pod network namespaces) stays, with directories of the cluster's own
// over the host paths they write (NODE_PATHS); it vanishes when the file is unbound.
// Inside it, the kernel tunables the kubelet insists on setting machine-wide (vm.overcommit_memory,
// kernel.panic, kernel.panic_on_oops: not namespaced) read as the values it wants from files bound
// over /proc/sys, so it never changes them for the host.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { inCluster } from './config.mjs';

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
const tryRun = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

/**
 * Host paths the node uses → its own directory (under <data>/ns). containerd names each pod's
 * network namespace by a file in /run/netns; its runc shims keep their state and sockets in
 * /run/containerd; libcni caches results in /var/lib/cni; the kubelet keeps device plugin sockets
 * in /var/lib/kubelet and links container logs from /var/log/containers, whatever its settings.
 */
const NODE_PATHS = {
  '/run/netns': 'netns',
  '/run/containerd': 'run-containerd',
  '/var/lib/cni': 'var-lib-cni',
  '/var/lib/kubelet': 'var-lib-kubelet',
  '/var/log/containers': 'var-log-containers',
};
const madeFile = (c) => path.join(c.dir, 'ns', 'made-mount-points.json');

/** Kernel settings the kubelet checks (pkg/kubelet/cm setupKernelTunables) and their wanted values. */
const KUBELET_TUNABLES = {
  'vm/overcommit_memory': 1,
  'vm/panic_on_oom': 0,
  'kernel/panic': 10,
  'kernel/panic_on_oops': 1,
  'kernel/keys/root_maxkeys': 1000000,
  'kernel/keys/root_maxbytes': 25000000,
};

const netnsExists = (c) => fs.existsSync(`/run/netns/${c.netns}`);

export function createNamespaces(c) {
  if (tryRun('ip', ['link', 'show', c.hostLink]) || netnsExists(c)) {
    throw new Error(
      `network namespace ${c.netns} or link ${c.hostLink} already exists (another cluster with index ${c.index}?): ` +
        'run `npm run cluster -- down` for its data directory, or set SD_CLUSTER_INDEX',
    );
  }
  run('ip', ['netns', 'add', c.netns]);
  const ns = ['-n', c.netns];
  run('ip', [...ns, 'link', 'set', 'lo', 'up']);
  run('ip', ['link', 'add', c.hostLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', c.netns]);
  run('ip', ['addr', 'add', `${c.hostIp}/30`, 'dev', c.hostLink]);
  run('ip', ['link', 'set', c.hostLink, 'up']);
  run('ip', [...ns, 'addr', 'add', `${c.nodeIp}/30`, 'dev', 'eth0']);
  run('ip', [...ns, 'link', 'set', 'eth0', 'up']);
  run('ip', ['route', 'add', c.serviceCidr, 'via', c.nodeIp, 'dev', c.hostLink]);
  // Forwarding between the bridge and the veth; bridged pod-to-pod traffic through iptables,
  // where kube-router's NetworkPolicy rules are.
  run('ip', [
    'netns',
    'exec',
    c.netns,
    'sysctl',
    '-qw',
    'net.ipv4.ip_forward=1',
    'net.bridge.bridge-nf-call-iptables=1',
  ]);

  fs.mkdirSync(path.dirname(c.mountNs), { recursive: true });
  fs.writeFileSync(c.mountNs, '');
  run('unshare', [`--mount=${c.mountNs}`, '--propagation', 'private', 'true']);
  const [nsenter, ...enter] = inCluster(c);
  // Paths the node writes whatever it is configured with: a directory of the cluster's own over
  // each, so nothing of it shows on the host and `down` removes it with the rest. A mount point
  // the host lacked is made (empty) and removed again by `down`.
  const made = [];
  for (const [target, own] of Object.entries(NODE_PATHS)) {
    const dir = path.join(c.dir, 'ns', own);
    fs.mkdirSync(dir, { recursive: true });
    if (!fs.existsSync(target)) {
      fs.mkdirSync(target, { recursive: true });
      made.push(target);
    }
    run(nsenter, [...enter, 'mount', '--bind', dir, target]);
  }
  fs.writeFileSync(madeFile(c), JSON.stringify(made));
  for (const [key, want] of Object.entries(KUBELET_TUNABLES)) {
    const file = `/proc/sys/${key}`;
    if (Number(fs.readFileSync(file, 'utf8').trim()) === want) continue;
    const shown = path.join(path.dirname(c.mountNs), key.replaceAll('/', '.'));
    fs.writeFileSync(shown, `${want}\n`);
    run(nsenter, [...enter, 'mount', '--bind', '-o', 'ro', shown, file]);
  }
}

/** Removes what createNamespaces made (whatever part of it exists). */
export function removeNamespaces(c) {
  if (fs.existsSync(c.mountNs)) tryRun('umount', [c.mountNs]);
  try {
    for (const dir of JSON.parse(fs.readFileSync(madeFile(c), 'utf8'))) tryRun('rmdir', [dir]);
  } catch {
    // no mount point was made
  }
  tryRun('ip', ['route', 'del', c.serviceCidr, 'via', c.nodeIp]);
  if (netnsExists(c)) tryRun('ip', ['netns', 'del', c.netns]);
  tryRun('ip', ['link', 'del', c.hostLink]);
  // containerd's parent cgroup of every container, once empty (rmdir refuses one that is not,
  // such as another cluster's).
  for (const controller of fs.readdirSync('/sys/fs/cgroup')) {
    if (fs.existsSync(`/sys/fs/cgroup/${controller}/k8s.io`))
      tryRun('rmdir', [`/sys/fs/cgroup/${controller}/k8s.io`]);
  }
}
