import { natsNames } from '@support-desk/contracts';
import {
  connectMongo,
  connectNats,
  createLogger,
  createOutboxRelay,
  deadLetterStore,
  ensureIndexes,
  ensureStreams,
  installGracefulShutdown,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { createSlaMonitor } from './app/sla-monitor.js';
import { loadRequestsConfig } from './config.js';
import { startReadModelConsumer } from './events/read-model-consumer.js';
import { requestModel } from './store/requests.js';
import { slaAlertModel } from './store/sla-alerts.js';

const config = loadRequestsConfig();
const logger = createLogger({ service: 'requests', level: config.LOG_LEVEL });

const conn = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
const nc = await connectNats({ url: config.NATS_URL, name: 'requests', logger });
const names = natsNames(config.NATS_NAMESPACE);
await ensureStreams(nc, names);

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
const monitor = createSlaMonitor(app.core, slaAlertModel(conn));
if (config.SLA_MONITOR_ENABLED) monitor.start(config.SLA_MONITOR_INTERVAL_MS);

const port = config.REQUESTS_PORT ?? config.PORT;
await app.listen({ host: config.HOST, port });

installGracefulShutdown({
  logger,
  timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  steps: [
    {
      name: 'drain',
      close: async () => {
        app.health.draining = true;
      },
    },
    { name: 'http', close: () => app.close() },
    { name: 'sla-monitor', close: () => monitor.stop() },
    { name: 'read-model-consumer', close: () => consumer.stop() },
    { name: 'outbox-relay', close: async () => relay.stop() },
    { name: 'nats', close: () => nc.drain() },
    { name: 'mongodb', close: () => conn.close() },
  ],
});
