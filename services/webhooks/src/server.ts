import { runService } from '@support-desk/platform/service';
import { composeService } from './composition.js';
import { listenPort, loadWebhooksConfig } from './config.js';

runService({
  name: 'webhooks',
  loadConfig: loadWebhooksConfig,
  port: listenPort,
  dbName: (config) => config.MONGO_DB,
  compose: (config, connections) => composeService({ config, ...connections, conn: connections.conn! }),
});
