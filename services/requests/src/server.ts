import {
  connectService,
  createOutboxRelay,
  deadLetterStore,
  ensureIndexes,
  serve,
  startService,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { createSlaMonitor } from './app/sla-monitor.js';
import { loadRequestsConfig } from './config.js';
import { startReadModelConsumer } from './events/read-model-consumer.js';
import { requestModel } from './store/requests.js';
import { slaAlertModel } from './store/sla-alerts.js';

startService('requests', async () => {
  const config = loadRequestsConfig();
  const connections = await connectService('requests', config, { dbName: config.MONGO_DB });
  const { logger, nc, names } = connections;
  const conn = connections.conn!;

  const relay = createOutboxRelay({ nc, models: [requestModel(conn), slaAlertModel(conn)], logger });
  const app = await buildApp({ config, logger, conn, nc, names, relay });
  const deadLetters = deadLetterStore(conn);
  await ensureIndexes(conn);
  await app.core.files.ensureIndexes();

  relay.start();
  const consumer = await startReadModelConsumer({
    nc,
    names,
    logger,
    durable: config.READ_MODEL_DURABLE,
    directory: app.core.directory,
    deadLetter: deadLetters.write,
  });
  const monitor = createSlaMonitor(app.core, slaAlertModel(conn), {
    intervalMs: config.SLA_MONITOR_INTERVAL_MS,
  });
  if (config.SLA_MONITOR_ENABLED) monitor.start();

  await serve({
    app,
    health: app.health,
    host: config.HOST,
    port: config.REQUESTS_PORT ?? config.PORT,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    connections,
    workers: [
      { name: 'sla-monitor', close: () => monitor.stop() },
      { name: 'read-model-consumer', close: () => consumer.stop() },
      { name: 'outbox-relay', close: () => relay.stop() },
    ],
  });
});
