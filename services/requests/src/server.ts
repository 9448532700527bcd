import { runService } from '@support-desk/platform/service';
import { composeService } from './composition.js';
import { listenPort, loadRequestsConfig } from './config.js';

runService({
  name: 'requests',
  loadConfig: loadRequestsConfig,
  port: listenPort,
  dbName: (config) => config.MONGO_DB,
  compose: (config, connections) => composeService({ config, ...connections, conn: connections.conn! }),
});
