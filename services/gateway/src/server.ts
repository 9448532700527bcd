import { connectService, serve, startService } from '@support-desk/platform';
import { composeService } from './composition.js';
import { gatewayLogger, listenPort, loadGatewayConfig, tlsFiles } from './config.js';

startService('gateway', async () => {
  const config = loadGatewayConfig();
  const logger = gatewayLogger(config);
  const connections = await connectService('gateway', config, { logger });
  const https = tlsFiles(config);
  const service = await composeService({
    config,
    logger,
    nc: connections.nc,
    names: connections.names,
    https,
  });
  const port = listenPort(config);
  await serve({
    service,
    host: config.HOST,
    port,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    drainMs: config.SHUTDOWN_DRAIN_MS,
    metricsPort: config.METRICS_PORT,
    connections,
  });
  logger.info({ url: `${https ? 'https' : 'http'}://${config.HOST}:${port}` }, 'gateway listening');
});
