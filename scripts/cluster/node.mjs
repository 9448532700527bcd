// The node's configuration files: containerd (its own root, state and socket under the cluster's
// directory), the CNI network, the kubelet, kube-proxy and CoreDNS. Why each unusual setting is
// there is in deploy/README.md ("A single-node cluster").
import fs from 'node:fs';
import path from 'node:path';
import { aptInstall, isRoot } from '../infra/packages.mjs';
import { findBinary } from '../infra/probes.mjs';

/** Debian's runc and CNI plugins (packages runc, containernetworking-plugins). */
export const RUNC = '/usr/sbin/runc';
export const CNI_BIN_DIR = '/usr/lib/cni';

/** Debian packages: binary or file → package. */
const PACKAGES = {
  containerd: 'containerd',
  ctr: 'containerd',
  [RUNC]: 'runc',
  [`${CNI_BIN_DIR}/bridge`]: 'containernetworking-plugins',
  iptables: 'iptables',
  conntrack: 'conntrack',
  ipset: 'ipset',
};

const present = (what) => (what.startsWith('/') ? fs.existsSync(what) : Boolean(findBinary(what)));

/** Installs the node's Debian packages that are missing (root only). */
export function ensurePackages() {
  const missing = [
    ...new Set(
      Object.entries(PACKAGES)
        .filter(([what]) => !present(what))
        .map(([, pkg]) => pkg),
    ),
  ];
  if (missing.length === 0) return;
  if (!isRoot())
    throw new Error(`missing Debian packages: ${missing.join(' ')} (apt-get install them as root)`);
  aptInstall(missing);
  const still = Object.keys(PACKAGES).filter((what) => !present(what));
  if (still.length) throw new Error(`still missing after apt-get: ${still.join(', ')}`);
}

const json = (file, value) => fs.writeFileSync(file, JSON.stringify(value, null, 2));

export function writeContainerdConfig(c, sandboxImage) {
  const dir = path.join(c.dir, 'containerd');
  fs.mkdirSync(path.join(dir, 'cni'), { recursive: true });
  const socket = path.join(dir, 'containerd.sock');
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  const toml = `version = 2
root = "${dir}/root"
state = "${dir}/state"
plugin_dir = ""
oom_score = 0
[grpc]
  address = "${socket}"
[ttrpc]
  address = "${socket}.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"
[${cri}]
  sandbox_image = "${sandboxImage}"
  # Lowering a process's OOM score is not permitted on these machines.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"
  discard_unpacked_layers = false
[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
[${cri}.containerd.runtimes.runc.options]
  BinaryName = "${RUNC}"
  SystemdCgroup = false
[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${dir}/cni"
  max_conf_num = 1
`;
  const config = path.join(dir, 'config.toml');
  fs.writeFileSync(config, toml);
  json(path.join(dir, 'cni', '10-support-desk.conflist'), {
    cniVersion: '1.0.0',
    name: 'support-desk-pods',
    plugins: [
      {
        type: 'bridge',
        bridge: 'cni0',
        isGateway: true,
        // Pods only talk inside the namespace; nothing is NATed out of it.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: 'host-local',
          ranges: [[{ subnet: c.podCidr, gateway: c.podGateway }]],
          routes: [{ dst: '0.0.0.0/0' }],
          dataDir: path.join(dir, 'ipam'),
        },
      },
      { type: 'portmap', capabilities: { portMappings: true } },
    ],
  });
  return { config, socket };
}

export function writeKubeletConfig(c, { socket, clientCa }) {
  const dir = path.join(c.dir, 'kubelet');
  fs.mkdirSync(dir, { recursive: true });
  const config = path.join(dir, 'config.json');
  json(config, {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    // This machine mounts cgroup v1 (hybrid); kubelets from 1.35 refuse it unless told.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    // No per-QoS cgroups and no node-allocatable enforcement: both write cgroup limits the
    // machine's shared v1 hierarchy is not ours to change.
    cgroupsPerQOS: false,
    enforceNodeAllocatable: [],
    oomScoreAdj: 0,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${socket}`,
    address: c.nodeIp,
    port: c.kubeletPort,
    readOnlyPort: 0,
    healthzBindAddress: c.nodeIp,
    healthzPort: c.kubeletHealthzPort,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: clientCa },
    },
    authorization: { mode: 'Webhook' },
    clusterDNS: [c.nodeIp],
    clusterDomain: c.dnsDomain,
    resolvConf: writeResolvConf(dir),
    podLogsDir: path.join(dir, 'pod-logs'),
    volumePluginDir: path.join(dir, 'volume-plugins'),
    // The machine's disk is shared and often fuller than the defaults allow.
    evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    maxPods: 60,
  });
  return { config, rootDir: path.join(dir, 'root'), certDir: path.join(dir, 'pki') };
}

/** Pods resolve only cluster names: the namespace has no way out, so no upstream is listed. */
function writeResolvConf(dir) {
  const file = path.join(dir, 'resolv.conf');
  fs.writeFileSync(file, '# no upstream resolvers: the cluster has no network beyond itself\n');
  return file;
}

export function writeKubeProxyConfig(c, kubeconfig) {
  const file = path.join(c.dir, 'kube-proxy.json');
  json(file, {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    mode: 'iptables',
    clientConnection: { kubeconfig },
    hostnameOverride: c.nodeName,
    bindAddress: c.nodeIp,
    healthzBindAddress: `${c.nodeIp}:${c.proxyHealthzPort}`,
    metricsBindAddress: `127.0.0.1:${c.proxyMetricsPort}`,
    clusterCIDR: c.podCidr,
    nodePortAddresses: [`${c.nodeIp}/32`],
    oomScoreAdj: 0,
    // Pods on one bridge without br_netfilter: masquerading every Service connection makes the
    // replies come back through the namespace's iptables, where they are un-NATed.
    iptables: { masqueradeAll: true },
    // The conntrack table is the machine's: leave its size and timeouts alone.
    conntrack: {
      maxPerCore: 0,
      min: 0,
      tcpEstablishedTimeout: '0s',
      tcpCloseWaitTimeout: '0s',
    },
  });
  return file;
}

export function writeCorefile(c, kubeconfig) {
  const file = path.join(c.dir, 'Corefile');
  fs.writeFileSync(
    file,
    `${c.dnsDomain}:53 in-addr.arpa:53 ip6.arpa:53 {
    bind ${c.nodeIp}
    errors
    health ${c.nodeIp}:${c.dnsHealthPort}
    ready ${c.nodeIp}:${c.dnsHealthPort + 1}
    kubernetes ${c.dnsDomain} in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig}
        pods insecure
    }
    cache 30
}
.:53 {
    bind ${c.nodeIp}
    errors
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`,
  );
  return file;
}
