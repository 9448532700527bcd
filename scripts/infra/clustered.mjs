// The clustered profile (`node scripts/infra.mjs up --cluster`, `npm start -- --cluster`): the
// store as in the single-node profile, NATS as a three-server JetStream cluster whose streams are
// provisioned at three replicas, and Redis as a Redis Cluster (three primaries, one replica each).
import { HOST } from './common.mjs';
import { downNatsCluster, natsClusterUrl, upNatsCluster } from './clustered-nats.mjs';
import {
  downRedisCluster,
  redisClusterNodes,
  redisClusterPorts,
  upRedisCluster,
} from './clustered-redis.mjs';

/** What the services and provision-streams get in the clustered profile, beside MONGO_URL. */
export const clusteredEnv = () => ({
  NATS_URL: natsClusterUrl(),
  // The gateway reads the cluster from REDIS_CLUSTER_NODES; REDIS_URL gives only credentials.
  REDIS_URL: `redis://${HOST}:${redisClusterPorts()[0]}`,
  REDIS_CLUSTER_NODES: redisClusterNodes(),
  NATS_STREAM_REPLICAS: '3',
});

export async function upClustered(c) {
  await upRedisCluster(c);
  await upNatsCluster(c);
  return clusteredEnv();
}

/** Stops whatever of the clustered profile this script started (nothing when none runs). */
export async function downClustered(c) {
  await downRedisCluster(c);
  await downNatsCluster(c);
}
