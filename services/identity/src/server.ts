import { connectService, serve, startService } from '@support-desk/platform';
import { composeService } from './composition.js';
import { listenPort, loadIdentityConfig } from './config.js';

startService('identity', async () => {
  const config = loadIdentityConfig();
  const connections = await connectService('identity', config, { dbName: config.MONGO_DB });
  const service = await composeService({ config, ...connections, conn: connections.conn! });
  await serve({
    service,
    host: config.HOST,
    port: listenPort(config),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    connections,
  });
});
