import { connectService, serve, startService } from '@support-desk/platform';
import { composeService } from './composition.js';
import { listenPort, loadRequestsConfig } from './config.js';

startService('requests', async () => {
  const config = loadRequestsConfig();
  const connections = await connectService('requests', config, { dbName: config.MONGO_DB });
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
