import { natsNames } from '@support-desk/contracts';
import {
  connectMongo,
  connectNats,
  createLogger,
  ensureIndexes,
  ensureStreams,
  installGracefulShutdown,
  pingMongo,
  pingNats,
} from '@support-desk/platform';
import { buildApp } from './app.js';
import { listenPort, loadIdentityConfig } from './config.js';
import { serveIdentityRpc } from './events/rpc.js';
import { createKeyring } from './oauth/keys.js';
import { createRuntime } from './runtime.js';

const config = loadIdentityConfig();
const logger = createLogger({ service: 'identity', level: config.LOG_LEVEL });

async function main() {
  const names = natsNames(config.NATS_NAMESPACE);
  const conn = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const nc = await connectNats({ url: config.NATS_URL, name: 'identity', logger });
  await ensureStreams(nc, names);
  const { deps, relay } = createRuntime({ config, conn, nc, names, logger });
  await ensureIndexes(conn);
  const keyring = await createKeyring(config, deps.clock);
  relay!.start();
  const rpc = serveIdentityRpc(nc, names, deps);
  const app = await buildApp({
    ...deps,
    keyring,
    health: { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
  });
  await app.listen({ port: listenPort(config), host: config.HOST });
  installGracefulShutdown({
    logger,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    steps: [
      {
        name: 'draining',
        close: async () => {
          app.health.draining = true;
        },
      },
      { name: 'http', close: () => app.close() },
      { name: 'rpc', close: () => rpc.stop() },
      { name: 'outbox relay', close: () => relay!.stop() },
      { name: 'nats', close: () => nc.drain() },
      { name: 'mongodb', close: () => conn.close() },
    ],
  });
}

main().catch((err) => {
  logger.fatal({ err }, 'identity failed to start');
  process.exit(1);
});
