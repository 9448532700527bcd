// The clustered profile's Redis: a Redis Cluster of three primaries with one replica each, from
// Debian's redis-server, on six loopback ports from SD_REDIS_CLUSTER_PORT (default 6391, so
// 6391–6396; their cluster buses 20 above), data and nodes.conf under <data>/redis-cluster/<port>. Formed once with
// `redis-cli --cluster create`; a later `up` reuses the running nodes (and their cluster).
// Node settings (2 s node timeout: failover in seconds): libs/platform/launch/servers.mjs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { redisClusterArgs, redisClusterCreateArgs } from '../../libs/platform/launch/servers.mjs';
import { HOST, InfraError, config, log, sleep } from './common.mjs';
import { startServer, stopOwnServers } from './launcher.mjs';
import { findBinary, redisReady } from './probes.mjs';

export const REDIS_CLUSTER_SIZE = 6;
export const REDIS_CLUSTER_NODE_TIMEOUT_MS = 2000;
/** Each node's cluster bus port is its port + 20 (6411–6416 by default). */
const REDIS_CLUSTER_BUS_OFFSET = 20;

function basePort() {
  const v = process.env.SD_REDIS_CLUSTER_PORT;
  const n = v ? Number.parseInt(v, 10) : 6391;
  if (!Number.isInteger(n) || n <= 0 || n + REDIS_CLUSTER_SIZE - 1 > 65535)
    throw new InfraError(`SD_REDIS_CLUSTER_PORT=${v} is not a valid port number`);
  return n;
}

/** The six nodes' ports. */
export const redisClusterPorts = () => Array.from({ length: REDIS_CLUSTER_SIZE }, (_, i) => basePort() + i);

/** The gateway's REDIS_CLUSTER_NODES for this cluster (every node: any one is enough to start). */
export const redisClusterNodes = () =>
  redisClusterPorts()
    .map((p) => `${HOST}:${p}`)
    .join(',');

function nodeDefs(c = config()) {
  return redisClusterPorts().map((port) => {
    const dir = path.join(c.dataDir, 'redis-cluster', String(port));
    return {
      name: `redis:${port}`,
      bin: 'redis-server',
      url: `redis://${HOST}:${port}`,
      port,
      dir,
      pidFile: path.join(dir, 'redis.pid'),
      logFile: path.join(dir, 'redis.log'),
      ready: () => redisReady(port),
      command: () => ({
        bin: findBinary('redis-server'),
        args: redisClusterArgs({
          host: HOST,
          port,
          dir,
          busPort: port + REDIS_CLUSTER_BUS_OFFSET,
          nodeTimeoutMs: REDIS_CLUSTER_NODE_TIMEOUT_MS,
        }),
      }),
    };
  });
}

function cli(port, ...args) {
  const r = spawnSync(findBinary('redis-cli') || 'redis-cli', ['-h', HOST, '-p', String(port), ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new InfraError(`redis-cli ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** `CLUSTER INFO` as a map; null when the node does not answer. */
export function clusterInfo(port) {
  try {
    const out = cli(port, 'cluster', 'info');
    return Object.fromEntries(
      out
        .split(/\r?\n/)
        .filter((l) => l.includes(':'))
        .map((l) => l.split(':')),
    );
  } catch {
    return null;
  }
}

const clusterOk = (ports) => ports.every((p) => clusterInfo(p)?.cluster_state === 'ok');

/** Starts the six nodes (or reuses them), forms the cluster once, and waits until every node says ok. */
export async function upRedisCluster(c = config()) {
  const defs = nodeDefs(c);
  for (const def of defs) await startServer(def, c);
  const ports = defs.map((d) => d.port);
  const formed = Number(clusterInfo(ports[0])?.cluster_known_nodes ?? 0) >= REDIS_CLUSTER_SIZE;
  if (!formed) {
    log(`redis    forming a cluster of ${ports.length} nodes (3 primaries, 1 replica each)`);
    cli(ports[0], ...redisClusterCreateArgs(HOST, ports));
  }
  const deadline = Date.now() + c.timeoutMs;
  while (!clusterOk(ports)) {
    if (Date.now() > deadline)
      throw new InfraError(`the Redis Cluster on ${ports.join(',')} did not reach state ok`);
    await sleep(250);
  }
  log(`redis    cluster ok: REDIS_CLUSTER_NODES=${redisClusterNodes()}`);
  return redisClusterNodes();
}

/** Stops the nodes this script started; their data (nodes.conf) goes too, so the next `up` forms afresh. */
export const downRedisCluster = (c = config()) => stopOwnServers(nodeDefs(c), 'Redis Cluster nodes');
