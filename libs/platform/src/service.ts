import { type NatsNames, natsNames, SERVICE_STREAMS, type ServiceName } from '@support-desk/contracts';
import { useStoreLocks } from './aggregate-lock.js';
import { ConfigError } from './config.js';
import type { HealthState } from './health.js';
import type { HttpApp } from './http.js';
import { createLogger, type Logger } from './logger.js';
import { startMetricsServer } from './metrics.js';
import { type Connection, connectMongo } from './mongo.js';
import { connectNats, type NatsConnection } from './nats.js';
import { installGracefulShutdown, type ShutdownStep } from './shutdown.js';
import { awaitStreams } from './streams.js';
import { flushTraces } from './telemetry/flush.js';

interface ServiceConfig {
  LOG_LEVEL: string;
  STORE_WRITE_LOCKS?: boolean;
  SHUTDOWN_DRAIN_MS?: number;
  MONGO_URL: string;
  NATS_URL: string;
  NATS_NAMESPACE: string;
}

export interface ServiceConnections {
  logger: Logger;
  names: NatsNames;
  nc: NatsConnection;
  /** Present when the service owns a database. */
  conn: Connection | null;
}

export interface ConnectOptions {
  /** The service's own database; omitted for a service without one (the gateway). */
  dbName?: string;
  /** A logger built by the service (e.g. with a buffered destination); else a standard one. */
  logger?: Logger;
}

/**
 * What every service's server.ts starts with: its logger, its own MongoDB database (when it has
 * one), NATS, and the JetStream streams it uses, which it waits for (an operator step makes
 * them: no service may create or change a stream).
 */
export async function connectService(
  service: ServiceName,
  config: ServiceConfig,
  { dbName, logger = createLogger({ service, level: config.LOG_LEVEL }) }: ConnectOptions = {},
): Promise<ServiceConnections> {
  useStoreLocks(config.STORE_WRITE_LOCKS === true);
  const conn = dbName ? await connectMongo({ url: config.MONGO_URL, dbName, logger }) : null;
  const nc = await connectNats({ url: config.NATS_URL, name: service, logger });
  const names = natsNames(config.NATS_NAMESPACE);
  await awaitStreams(nc, names, SERVICE_STREAMS[service], logger);
  return { logger, names, nc, conn };
}

/**
 * What every service's composition root (`src/composition.ts`) returns: the HTTP app (never
 * listening), its health state, and its background work (relays, consumers, monitors), started
 * by `start` and stopped by `close`. Tests build the same thing and use `inject`.
 */
export interface ComposedService {
  app: HttpApp;
  health: HealthState;
  /** Starts the background work (idempotent); the HTTP app is ready without it. */
  start(): Promise<void> | void;
  /** Stops the background work, in the order it must stop (connections are not closed). */
  close(): Promise<void>;
}

export interface ServeOptions {
  service: ComposedService;
  host: string;
  port: number;
  timeoutMs: number;
  /** How long to go on serving after readiness turns 503 (`SHUTDOWN_DRAIN_MS`). */
  drainMs?: number;
  connections: ServiceConnections;
  /** Anything else to close after MongoDB (e.g. Redis). */
  finally?: ShutdownStep[];
  /** `METRICS_PORT`: /metrics on its own listener (same host); 0 or absent: none. */
  metricsPort?: number;
}

/**
 * Starts the background work and listens, then on SIGTERM/SIGINT shuts down in the one order every
 * service uses: readiness off and keep-alive connections asked to close, `drainMs` more of normal
 * service (traffic moves to other replicas), HTTP closed after in-flight requests finish, the
 * background work, NATS drained, MongoDB closed, buffered spans sent.
 */
export async function serve(opts: ServeOptions): Promise<void> {
  const { service, connections } = opts;
  const { logger, nc, conn } = connections;
  const metricsServer = opts.metricsPort
    ? await startMetricsServer({ host: opts.host, port: opts.metricsPort, logger })
    : null;
  await service.start();
  await service.app.listen({ host: opts.host, port: opts.port });
  installGracefulShutdown({
    logger,
    timeoutMs: opts.timeoutMs,
    steps: [
      {
        name: 'readiness',
        close: async () => {
          service.health.draining = true;
          service.app.startDraining();
        },
      },
      { name: 'drain', close: () => new Promise<void>((r) => setTimeout(r, opts.drainMs ?? 0)) },
      { name: 'http', close: () => service.app.close() },
      { name: 'background work', close: () => service.close() },
      { name: 'nats', close: () => nc.drain() },
      ...(conn ? [{ name: 'mongodb', close: () => conn.close() }] : []),
      ...(opts.finally ?? []),
      // Last, so the final scrape can still see the shutdown.
      ...(metricsServer ? [{ name: 'metrics', close: () => metricsServer.close() }] : []),
      // The spans of the shutdown itself included.
      { name: 'traces', close: flushTraces },
    ],
  });
}

/**
 * Runs a server's start-up. A configuration error prints one line naming the bad variable; any
 * other failure is logged; both exit 1.
 */
/** The settings `runService` reads of every service's validated configuration. */
interface ListenConfig extends ServiceConfig {
  HOST: string;
  SHUTDOWN_TIMEOUT_MS: number;
  METRICS_PORT?: number;
}

/** What a service's `server.ts` gives `runService`: where its pieces come from, nothing more. */
export interface ServiceEntry<C extends ListenConfig> {
  name: ServiceName;
  /** Reads and validates the environment (a ConfigError ends the process with its message). */
  loadConfig(): C;
  // NoInfer: the configuration's type is what loadConfig returns, not a narrower one `port` takes.
  port(config: NoInfer<C>): number;
  /** The service's own database; absent for a service without one (the gateway). */
  dbName?(config: NoInfer<C>): string;
  /** A logger of the service's own making; else the standard one. */
  logger?(config: NoInfer<C>): Logger;
  /** The composition root. */
  compose(config: NoInfer<C>, connections: ServiceConnections): Promise<ComposedService>;
}

/**
 * A service's whole `server.ts`: load the configuration, connect, compose, listen, and shut down
 * in the one order `serve` keeps; a failure to start ends the process (`startService`).
 */
export function runService<C extends ListenConfig>(entry: ServiceEntry<C>): void {
  startService(entry.name, async () => {
    const config = entry.loadConfig();
    const connections = await connectService(entry.name, config, {
      dbName: entry.dbName?.(config),
      logger: entry.logger?.(config),
    });
    const service = await entry.compose(config, connections);
    const port = entry.port(config);
    await serve({
      service,
      host: config.HOST,
      port,
      timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
      drainMs: config.SHUTDOWN_DRAIN_MS,
      metricsPort: config.METRICS_PORT,
      connections,
    });
    connections.logger.info({ host: config.HOST, port }, `${entry.name} listening`);
  });
}

export function startService(service: string, main: () => Promise<void>): void {
  main().catch((err) => {
    if (err instanceof ConfigError) process.stderr.write(`${service}: ${err.message}\n`);
    else createLogger({ service }).fatal({ err }, `${service} failed to start`);
    process.exit(1);
  });
}
