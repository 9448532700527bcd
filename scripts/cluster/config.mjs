// Where a cluster lives and its addresses. A cluster runs in a network namespace of its own
// (`sd-cluster-<index>`), joined to the host by one veth pair; its components listen on their
// usual ports inside it, on the node's address, so they cannot collide with anything on the
// host's loopback or with another cluster. The index (from a hash of the data directory, or
// SD_CLUSTER_INDEX) picks the host-visible addresses, so two clones can each run one.
//   SD_CLUSTER_DIR     the cluster's data directory (default <repo>/.data/cluster)
//   SD_CLUSTER_INDEX   1–250 (default: derived from SD_CLUSTER_DIR)
import crypto from 'node:crypto';
import path from 'node:path';
import { ROOT } from '../infra/common.mjs';

export function clusterConfig(env = process.env) {
  const dir = path.resolve(env.SD_CLUSTER_DIR || path.join(ROOT, '.data', 'cluster'));
  let index = Number(env.SD_CLUSTER_INDEX || 0);
  if (env.SD_CLUSTER_INDEX && !(Number.isInteger(index) && index >= 1 && index <= 250)) {
    throw new Error(`SD_CLUSTER_INDEX=${env.SD_CLUSTER_INDEX} is not an integer from 1 to 250`);
  }
  if (!index) index = (crypto.createHash('sha256').update(dir).digest().readUInt16BE(0) % 250) + 1;
  return {
    dir,
    index,
    netns: `sd-cluster-${index}`,
    // The mount namespace the node's processes share (see network.mjs), bound to this file.
    mountNs: path.join(dir, 'ns', 'mnt'),
    hostLink: `sd-kube${index}`,
    hostIp: `10.255.${index}.1`,
    nodeIp: `10.255.${index}.2`,
    nodeName: 'sd-node',
    // Routed from the host through the veth, so the host reaches Services by their ClusterIPs.
    serviceCidr: `10.96.${index}.0/24`,
    // Only inside the namespace: a pod's address is never seen on the host.
    podCidr: '10.244.0.0/24',
    podGateway: '10.244.0.1',
    ports: { etcdClientPort: 2379, etcdPeerPort: 2380, apiPort: 6443 },
    kubeletHealthzPort: 10248,
    kubeletPort: 10250,
    proxyHealthzPort: 10256,
    proxyMetricsPort: 10249,
    controllerManagerPort: 10257,
    schedulerPort: 10259,
    dnsHealthPort: 8181,
    firewallHealthPort: 20244,
    dnsDomain: 'cluster.local',
    kubeconfig: path.join(dir, 'kubeconfig'),
    stateFile: path.join(dir, 'cluster.json'),
  };
}

/** nsenter prefix that runs a command in the cluster's network and mount namespaces. */
export const inCluster = (c) => ['nsenter', `--net=/run/netns/${c.netns}`, `--mount=${c.mountNs}`, '--'];
