// How Support Desk launches its local servers (Redis, NATS with JetStream, mongod or FerretDB),
// in one place for `scripts/infra.mjs` (the servers `npm start` and `npm test` use) and for the
// tests' private servers (`@support-desk/platform/testing`). Plain JavaScript with a declaration
// file: the infra script runs before anything is compiled.

export * from './postgres.mjs';

/** Redis without persistence (a rate-limit and deny-list cache): nothing is written to `dir`. */
export const redisArgs = ({ host, port, dir }) => [
  '--port',
  String(port),
  '--bind',
  host,
  '--dir',
  dir,
  '--save',
  '',
  '--appendonly',
  'no',
  '--daemonize',
  'no',
];

/**
 * A Redis Cluster node: its cluster bus on `busPort` (Redis' default, port + 10000, can fall
 * outside the ports one is given), a 2 s node timeout (Redis' default is 15 s: a dead primary's
 * replica takes over about 2–4 s after it stops answering), and a replica takes over however
 * stale its copy (these are caches and counters: availability first).
 */
export const redisClusterArgs = ({ host, port, dir, busPort, nodeTimeoutMs = 2000 }) => [
  ...redisArgs({ host, port, dir }),
  '--cluster-enabled',
  'yes',
  '--cluster-port',
  String(busPort),
  '--cluster-config-file',
  'nodes.conf',
  '--cluster-node-timeout',
  String(nodeTimeoutMs),
  '--cluster-replica-validity-factor',
  '0',
];

/** `redis-cli` arguments forming a cluster of these nodes: the first half primaries, one replica each. */
export const redisClusterCreateArgs = (host, ports) => [
  '--cluster',
  'create',
  ...ports.map((p) => `${host}:${p}`),
  '--cluster-replicas',
  '1',
  '--cluster-yes',
];

/** NATS with JetStream storing under `dir`; monitoring (for readiness) only when a port is given. */
export const natsArgs = ({ host, port, dir, monitorPort }) => [
  '-a',
  host,
  '-p',
  String(port),
  ...(monitorPort ? ['-m', String(monitorPort)] : []),
  '-js',
  '-sd',
  dir,
];

/**
 * One server of a JetStream cluster: `natsArgs` plus its name, the cluster's name, its route
 * listener on `host` and the routes to every server (its own is ignored), each on its own host
 * (all one on loopback; one address each when each server has a network namespace of its own).
 */
export const natsClusterArgs = ({
  host,
  port,
  dir,
  monitorPort,
  serverName,
  clusterName,
  routePort,
  routes,
}) => [
  ...natsArgs({ host, port, dir, monitorPort }),
  '--server_name',
  serverName,
  '--cluster_name',
  clusterName,
  '--cluster',
  `nats://${host}:${routePort}`,
  '--routes',
  routes.map((r) => `nats://${r.host}:${r.port}`).join(','),
];

export const mongodArgs = ({ host, port, dir }) => [
  '--dbpath',
  dir,
  '--port',
  String(port),
  '--bind_ip',
  host,
];

/**
 * FerretDB v1: on PostgreSQL when `postgresqlUrl` is given (the default store, see postgres.mjs),
 * else on its SQLite backend under `dir`; `dir` also holds its state file. The debug listener is off
 * unless a port is given (its default, 127.0.0.1:8088, would collide between servers). Its only
 * pushdown switches are left alone: `--test-enable-nested-pushdown` returns wrong results for dotted
 * paths through arrays (`{'attachments.id': x}` finds nothing), and there is no sort or limit one.
 */
export const ferretdbArgs = ({ host, port, dir, debugPort, logLevel = 'warn', postgresqlUrl }) => [
  ...(postgresqlUrl
    ? ['--handler=postgresql', `--postgresql-url=${postgresqlUrl}`]
    : ['--handler=sqlite', `--sqlite-url=file:${dir}/`]),
  `--listen-addr=${host}:${port}`,
  `--state-dir=${dir}`,
  debugPort ? `--debug-addr=${host}:${debugPort}` : '--debug-addr=-',
  `--log-level=${logLevel}`,
];

/**
 * FerretDB sends usage telemetry unless told not to; this machine has no network for it anyway.
 * Its garbage collector ran at Go's default pace (GOGC 100): about a sixth of FerretDB's CPU under
 * load was marking and sweeping (a CPU profile of its debug listener), and FerretDB is the largest
 * CPU cost of every call on the local store. At 400 it used 16-25 % less CPU per call through the
 * stack (a list 24 -> 18 ms; BENCHMARKS.md, issue 37) for more memory: 730 MB resident at the end
 * of a stack bench against 506 MB. GOMEMLIMIT bounds the heap: near it, Go collects harder.
 */
export const FERRETDB_ENV = { FERRETDB_TELEMETRY: 'disable', GOGC: '400', GOMEMLIMIT: '768MiB' };
