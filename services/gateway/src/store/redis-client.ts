import type { Logger } from '@support-desk/platform/core';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { type GatewayConfig, listFrom } from '../config.js';

/** The gateway's Redis: one server (REDIS_URL), or a Redis Cluster (REDIS_CLUSTER_NODES). */
export type RedisClient = Redis | Cluster;

/**
 * The hash slot of a key when the client is a Cluster's (keys of one script call must share
 * one), null on a single server, where any keys may go together.
 */
export const slotOf = (redis: RedisClient): ((key: string) => number) | null =>
  redis instanceof Cluster ? (key) => calculateSlot(key) : null;

/** `host:port` items of REDIS_CLUSTER_NODES as ioredis' start-up nodes. */
function clusterNodes(value: string): { host: string; port: number }[] {
  return listFrom(value).map((item) => {
    const at = item.lastIndexOf(':');
    return { host: item.slice(0, at), port: Number(item.slice(at + 1)) };
  });
}

/**
 * Bounded: a call waits at most the command timeout, and nothing queues while Redis is away.
 * Auto-pipelining: commands issued in one event-loop turn (deny-list look-ups of concurrent
 * calls) share one write and one read (per node on a Cluster); the rate limiter batches its own
 * calls per turn (`sliding-window-batch.ts`). On a Cluster the credentials and TLS of REDIS_URL
 * apply to every node; a failover (MOVED, TRYAGAIN, CLUSTERDOWN) is retried by ioredis within
 * the same command timeout.
 */
export function connectRedis(config: GatewayConfig, logger: Logger): RedisClient {
  const options: RedisOptions = {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2000,
    lazyConnect: true,
  };
  let redis: RedisClient;
  if (config.REDIS_CLUSTER_NODES) {
    const url = new URL(config.REDIS_URL);
    redis = new Cluster(clusterNodes(config.REDIS_CLUSTER_NODES), {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      lazyConnect: true,
      clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: 2000,
      redisOptions: {
        ...options,
        username: decodeURIComponent(url.username) || undefined,
        password: decodeURIComponent(url.password) || undefined,
        tls: url.protocol === 'rediss:' ? {} : undefined,
      },
    });
  } else {
    redis = new Redis(config.REDIS_URL, {
      ...options,
      enableAutoPipelining: true,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
  }
  redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis error'));
  return redis;
}

/**
 * Connects a lazy client, or waits for one already connecting (a health probe's PING starts a
 * lazy Cluster's connection), up to `timeoutMs`: calls that arrive before it is ready would
 * find no offline queue and fail open.
 */
export async function redisReady(redis: RedisClient, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'wait') {
    await redis.connect();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', ready);
      reject(new Error(`Redis not ready within ${timeoutMs} ms (${redis.status})`));
    }, timeoutMs);
    const ready = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', ready);
  });
}
