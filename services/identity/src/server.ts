import { runService } from '@support-desk/platform/service';
import { composeService } from './composition.js';
import { listenPort, loadIdentityServiceConfig } from './config.js';

runService({
  name: 'identity',
  loadConfig: loadIdentityServiceConfig,
  port: listenPort,
  dbName: (config) => config.MONGO_DB,
  compose: (config, connections) => composeService({ config, ...connections, conn: connections.conn! }),
});
