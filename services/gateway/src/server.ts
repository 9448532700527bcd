import { readFileSync } from 'node:fs';
import { ConfigError, connectService, createLogger, serve, startService } from '@support-desk/platform';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { buildApp } from './app.js';
import { loadGatewayConfig } from './config.js';

startService('gateway', async () => {
  const config = loadGatewayConfig();
  if (Boolean(config.TLS_CERT) !== Boolean(config.TLS_KEY)) {
    throw new ConfigError('Invalid configuration: TLS_CERT and TLS_KEY must be set together');
  }
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

  const connections = await connectService('gateway', config, { logger });
  const { nc, names } = connections;
  const { app, health } = await buildApp({ config, logger, nc, names, redis, https });
  const port = config.GATEWAY_PORT ?? config.PORT;
  await serve({
    app,
    health,
    host: config.HOST,
    port,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    connections,
    finally: [{ name: 'redis', close: () => redis.quit() }],
  });
  logger.info({ url: `${https ? 'https' : 'http'}://${config.HOST}:${port}` }, 'gateway listening');
});
