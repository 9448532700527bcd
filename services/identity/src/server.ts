import {
  connectService,
  ensureIndexes,
  pingMongo,
  pingNats,
  serve,
  startService,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { createHousekeeping } from './app/housekeeping.js';
import { listenPort, loadIdentityConfig } from './config.js';
import { serveIdentityRpc } from './events/rpc.js';
import { createKeyring } from './oauth/keys.js';
import { createRuntime } from './runtime.js';

startService('identity', async () => {
  const config = loadIdentityConfig();
  const connections = await connectService('identity', config, { dbName: config.MONGO_DB });
  const { logger, nc, names } = connections;
  const conn = connections.conn!;
  const { deps, relay } = createRuntime({ config, conn, nc, names, logger });
  await ensureIndexes(conn);
  const keyring = await createKeyring(config, deps.clock);
  relay!.start();
  const rpc = serveIdentityRpc(nc, names, deps);
  const housekeeping = createHousekeeping(deps, { intervalMs: config.IDENTITY_HOUSEKEEPING_INTERVAL_MS });
  if (config.IDENTITY_HOUSEKEEPING_INTERVAL_MS > 0) housekeeping.start();
  const app = await buildApp({
    ...deps,
    keyring,
    health: { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
  });
  await serve({
    app,
    health: app.health,
    host: config.HOST,
    port: listenPort(config),
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    connections,
    workers: [
      { name: 'rpc', close: () => rpc.stop() },
      { name: 'housekeeping', close: () => housekeeping.stop() },
      { name: 'outbox relay', close: () => relay!.stop() },
    ],
  });
});
