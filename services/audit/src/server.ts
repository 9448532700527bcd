import { natsNames } from '@support-desk/contracts';
import {
  connectMongo,
  connectNats,
  createLogger,
  deadLetterStore,
  ensureIndexes,
  ensureStreams,
  installGracefulShutdown,
  pingMongo,
  pingNats,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { listenPort, loadAuditConfig } from './config.js';
import { startIngestion } from './events/ingestion.js';
import { eventModel } from './store/event-model.js';
import { startRetention } from './store/retention.js';

const config = loadAuditConfig();
const logger = createLogger({ service: 'audit', level: config.LOG_LEVEL });

const conn = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
eventModel(conn);
deadLetterStore(conn);
await ensureIndexes(conn);
const retention = await startRetention({
  conn,
  logger,
  days: config.AUDIT_RETENTION_DAYS,
  sweepIntervalMs: config.AUDIT_RETENTION_SWEEP_MS,
  sweepBatch: config.AUDIT_RETENTION_SWEEP_BATCH,
});

const nc = await connectNats({ url: config.NATS_URL, name: 'audit', logger });
const names = natsNames(config.NATS_NAMESPACE);
await ensureStreams(nc, names);
const ingestion = await startIngestion({
  nc,
  conn,
  names,
  logger,
  durable: config.AUDIT_DURABLE,
  concurrency: config.AUDIT_CONCURRENCY,
  batchSize: config.AUDIT_BATCH_SIZE,
  flushMs: config.AUDIT_BATCH_FLUSH_MS,
  maxConcurrentWrites: config.AUDIT_BATCH_WRITES,
  maxDeliver: config.AUDIT_MAX_DELIVER,
  ackWaitMs: config.AUDIT_ACK_WAIT_MS,
  statsLogMs: config.AUDIT_STATS_LOG_MS,
});

const { app, health } = buildApp({
  logger,
  conn,
  internalSecret: config.INTERNAL_AUTH_SECRET,
  checks: { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
});
await app.listen({ host: config.HOST, port: listenPort(config) });

installGracefulShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  steps: [
    { name: 'readiness', close: async () => (health.draining = true) },
    { name: 'http', close: () => app.close() },
    // Stops pulling, writes the batch in hand and acks it; the rest is redelivered on restart.
    { name: 'ingestion', close: () => ingestion.stop() },
    { name: 'retention', close: () => retention.stop() },
    { name: 'nats', close: () => nc.drain() },
    { name: 'mongodb', close: () => conn.close() },
  ],
});
