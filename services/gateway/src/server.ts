import { runService } from '@support-desk/platform/service';
import { composeService } from './composition.js';
import { gatewayLogger, listenPort, loadGatewayConfig, tlsFiles } from './config.js';

runService({
  name: 'gateway',
  loadConfig: loadGatewayConfig,
  port: listenPort,
  logger: gatewayLogger,
  compose: (config, { logger, nc, names }) =>
    composeService({ config, logger, nc, names, https: tlsFiles(config) }),
});
