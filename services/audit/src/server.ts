import {
  connectService,
  deadLetterStore,
  ensureIndexes,
  pingMongo,
  pingNats,
  serve,
  startService,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { ingestionSettings, listenPort, loadAuditConfig } from './config.js';
import { startIngestion } from './events/ingestion.js';
import { eventModel } from './store/event-model.js';
import { startRetention } from './store/retention.js';

startService('audit', async () => {
  const config = loadAuditConfig();
  const connections = await connectService('audit', config, { dbName: config.MONGO_DB });
  const { logger, nc, names } = connections;
  const conn = connections.conn!;
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
  const ingestion = await startIngestion({ nc, conn, names, logger, ...ingestionSettings(config) });

  const { app, health } = buildApp({
    logger,
    conn,
    internalSecret: config.INTERNAL_AUTH_SECRET,
    checks: { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
  });
  await serve({
    app,
    health,
    host: config.HOST,
    port: listenPort(config),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    connections,
    workers: [
      // Stops pulling, writes the batch in hand and acks it; the rest is redelivered on restart.
      { name: 'ingestion', close: () => ingestion.stop() },
      { name: 'retention', close: () => retention.stop() },
    ],
  });
});
