import { connectService, serve, startService } from '@support-desk/platform';
import { composeService } from './composition.js';
import { listenPort, loadWebhooksConfig } from './config.js';

startService('webhooks', async () => {
  const config = loadWebhooksConfig();
  const connections = await connectService('webhooks', config, { dbName: config.MONGO_DB });
  const service = await composeService({ config, ...connections, conn: connections.conn! });
  await serve({
    service,
    host: config.HOST,
    port: listenPort(config),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    drainMs: config.SHUTDOWN_DRAIN_MS,
    metricsPort: config.METRICS_PORT,
    connections,
  });
});
