// The clustered profile's NATS: three nats-servers (the pinned release, nats-server.mjs) forming
// one JetStream cluster on loopback. From SD_NATS_CLUSTER_PORT (default 4231): clients on
// base…base+2, routes on base+3…base+5, monitoring on base+6…base+8; JetStream under
// <data>/nats-cluster/<n>. Like the single server, no authorization (loopback, development);
// deploy/nats.conf's users and permissions are what a deployment runs.
import path from 'node:path';
import { natsClusterArgs } from '../../libs/platform/launch/servers.mjs';
import { HOST, InfraError, config, log, sleep } from './common.mjs';
import { startServer, stopOwnServers } from './launcher.mjs';
import { ensureNatsServer } from './nats-server.mjs';
import { natsReady } from './probes.mjs';

export const NATS_CLUSTER_SIZE = 3;
const CLUSTER_NAME = 'support-desk';

function basePort() {
  const v = process.env.SD_NATS_CLUSTER_PORT;
  const n = v ? Number.parseInt(v, 10) : 4231;
  if (!Number.isInteger(n) || n <= 0 || n + 3 * NATS_CLUSTER_SIZE - 1 > 65535)
    throw new InfraError(`SD_NATS_CLUSTER_PORT=${v} is not a valid port number`);
  return n;
}

/** The three servers: client, route and monitoring ports. */
export function natsClusterServers() {
  const base = basePort();
  return Array.from({ length: NATS_CLUSTER_SIZE }, (_, i) => ({
    name: `nats-${i + 1}`,
    port: base + i,
    routePort: base + NATS_CLUSTER_SIZE + i,
    monitorPort: base + 2 * NATS_CLUSTER_SIZE + i,
  }));
}

/** NATS_URL for the cluster: every server, so a client finds one however many are down at its start. */
export const natsClusterUrl = () =>
  natsClusterServers()
    .map((s) => `nats://${HOST}:${s.port}`)
    .join(',');

function serverDefs(c = config()) {
  const servers = natsClusterServers();
  return servers.map((s, i) => {
    const dir = path.join(c.dataDir, 'nats-cluster', String(i + 1));
    return {
      name: s.name,
      bin: 'nats-server',
      url: `nats://${HOST}:${s.port}`,
      port: s.port,
      monitorPort: s.monitorPort,
      dir,
      pidFile: path.join(dir, 'nats.pid'),
      logFile: path.join(dir, 'nats.log'),
      ready: () => natsReady(s.monitorPort),
      command: () => ({
        bin: ensureNatsServer(),
        args: natsClusterArgs({
          host: HOST,
          port: s.port,
          dir,
          monitorPort: s.monitorPort,
          serverName: s.name,
          clusterName: CLUSTER_NAME,
          routePort: s.routePort,
          routes: servers.map((o) => ({ host: HOST, port: o.routePort })),
        }),
      }),
    };
  });
}

async function jsz(monitorPort) {
  try {
    const res = await fetch(`http://${HOST}:${monitorPort}/jsz`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}

/** Starts the three servers together (each waits for a JetStream meta leader) and waits for one. */
export async function upNatsCluster(c = config()) {
  const defs = serverDefs(c);
  // In parallel: a server of a JetStream cluster is healthy only once the cluster has a leader.
  await Promise.all(defs.map((def) => startServer(def, c)));
  const deadline = Date.now() + c.timeoutMs;
  for (;;) {
    const info = await jsz(defs[0].monitorPort);
    const meta = info?.meta_cluster;
    if (meta?.leader && (meta.cluster_size ?? 0) >= NATS_CLUSTER_SIZE) break;
    if (Date.now() > deadline) throw new InfraError('the NATS cluster elected no JetStream leader in time');
    await sleep(250);
  }
  log(`nats     JetStream cluster ok: NATS_URL=${natsClusterUrl()}`);
  return natsClusterUrl();
}

/** Stops the servers this script started; their JetStream data goes too (the next `up` starts afresh). */
export const downNatsCluster = (c = config()) => stopOwnServers(serverDefs(c), 'NATS cluster servers');
