import { connectService, serve, startService } from '@support-desk/platform';
import { composeService } from './composition.js';
import { listenPort, loadIdentityServiceConfig } from './config.js';

startService('identity', async () => {
  const config = loadIdentityServiceConfig();
  const connections = await connectService('identity', config, { dbName: config.MONGO_DB });
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
