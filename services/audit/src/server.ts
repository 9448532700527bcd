import { runService } from '@support-desk/platform/service';
import { composeService } from './composition.js';
import { listenPort, loadAuditConfig } from './config.js';

runService({
  name: 'audit',
  loadConfig: loadAuditConfig,
  port: listenPort,
  dbName: (config) => config.MONGO_DB,
  compose: (config, connections) => composeService({ config, ...connections, conn: connections.conn! }),
});
