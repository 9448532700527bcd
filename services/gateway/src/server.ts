import { readFileSync } from 'node:fs';
import { natsNames } from '@support-desk/contracts';
import { connectNats, createLogger, ensureStreams, installGracefulShutdown } from '@support-desk/platform';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { loadGatewayConfig } from './config.js';

const config = loadGatewayConfig();
// One log line per request is one write(2) per request unless buffered: lines are gathered up
// to LOG_BUFFER_BYTES and flushed at least every second (and synchronously at exit).
const logDestination =
  config.LOG_BUFFER_BYTES > 0
    ? pino.destination({ dest: 1, sync: false, minLength: config.LOG_BUFFER_BYTES })
    : undefined;
if (logDestination) {
  setInterval(() => {
    try {
      logDestination.flush();
    } catch {
      // destroyed (shutting down): the exit hook has flushed synchronously
    }
  }, 1000).unref();
}
const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL, destination: logDestination });

if (Boolean(config.TLS_CERT) !== Boolean(config.TLS_KEY)) {
  logger.fatal('TLS_CERT and TLS_KEY must be set together');
  process.exit(1);
}
const https =
  config.TLS_CERT && config.TLS_KEY
    ? { cert: readFileSync(config.TLS_CERT), key: readFileSync(config.TLS_KEY) }
    : null;

// Bounded: a call waits at most the command timeout, and nothing queues while Redis is away.
// Auto-pipelining: commands issued in one event-loop turn (rate-limit scripts and deny-list
// look-ups of concurrent calls) share one write and one read.
const redis = new Redis(config.REDIS_URL, {
  enableAutoPipelining: true,
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: 2000,
  retryStrategy: (times) => Math.min(times * 200, 2000),
  lazyConnect: true,
});
redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
await redis.connect().catch((err) => logger.warn({ err: err.message }, 'redis not reachable yet'));

const names = natsNames(config.NATS_NAMESPACE);
const nc = await connectNats({ url: config.NATS_URL, name: 'gateway', logger });
await ensureStreams(nc, names);

const { app, health } = await buildApp({ config, logger, nc, names, redis, https });
const port = config.GATEWAY_PORT ?? config.PORT;
await app.listen({ host: config.HOST, port });
logger.info({ url: `${https ? 'https' : 'http'}://${config.HOST}:${port}` }, 'gateway listening');

installGracefulShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  steps: [
    {
      name: 'drain',
      close: async () => {
        health.draining = true;
      },
    },
    { name: 'http', close: () => app.close() },
    { name: 'nats', close: () => nc.drain() },
    { name: 'redis', close: () => redis.quit() },
  ],
});
