import { natsNames } from '@support-desk/contracts';
import { connectMongo, ensureIndexes, useStoreLocks } from '@support-desk/platform/service';
import { createLogger } from '@support-desk/platform/core';
import {
  createOutboxRelay,
  type MessageSigner,
  type NatsConnection,
  natsConnectOptions,
  type OutboxRelay,
  serviceSigner,
} from '@support-desk/platform/messaging';
import { connect } from '@nats-io/transport-node';
import { loadIdentityConfig } from '../config.js';
import { outboxModels } from '../store/index.js';
import type { Deps } from '../use-cases/deps.js';
import { identityDeps } from '../wiring.js';

/** An admin on NATS: its connection, and identity's key, which signs what it asks of the services. */
export interface AdminNats {
  nc: NatsConnection;
  signer: MessageSigner;
}

/**
 * One database and NATS connection with identity's use cases on them: what an admin tool (deskctl)
 * runs its commands against, with the service's own configuration variables and defaults.
 */
export interface AdminSession {
  deps: Deps;
  /** null when NATS did not answer: changes then stay in the outbox for the service to relay. */
  nats: AdminNats | null;
  /** Publishes while commands run (a batch), so a revoked key is refused at once. */
  startRelay(): void;
  /** Publishes what the commands wrote (at most 5 s), then stops the relay. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface AdminSessionOptions {
  env: NodeJS.ProcessEnv;
  /** The connection's name on NATS (`deskctl`). */
  name: string;
  /** Told when NATS does not answer (the session still opens on the store alone). */
  warn(message: string): void;
}

async function flushOutbox(relay: OutboxRelay | null) {
  if (!relay) return;
  relay.start();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([relay.idle(), new Promise((r) => (timer = setTimeout(r, 5000)))]);
  clearTimeout(timer);
  await relay.stop();
}

export async function openAdminSession({ env, name, warn }: AdminSessionOptions): Promise<AdminSession> {
  const config = loadIdentityConfig(env);
  // An admin writes the same aggregates as the identity replicas do.
  useStoreLocks(config.STORE_WRITE_LOCKS);
  const logger = createLogger({ service: name, level: 'silent' });
  const conn = await connectMongo({
    url: config.MONGO_URL,
    dbName: config.MONGO_DB,
    serverSelectionTimeoutMS: 5000,
  });
  let nats: AdminNats | null = null;
  const close = async () => {
    await nats?.nc.close().catch(() => undefined);
    await conn.close().catch(() => undefined);
  };
  try {
    const names = natsNames(config.NATS_NAMESPACE);
    try {
      // An admin is identity on NATS: its user, its inbox prefix and its key.
      const signer = serviceSigner('identity', config);
      const nc = await connect({
        ...natsConnectOptions(config.NATS_URL),
        name,
        inboxPrefix: '_INBOX_identity',
        timeout: 3000,
      });
      nats = { nc, signer };
    } catch (err) {
      nats = null;
      warn(
        `NATS unavailable (${(err as Error).message}); events stay in the outbox until the identity service relays them`,
      );
    }
    const deps = identityDeps({ config, conn, names, logger });
    // Published here when NATS answers; else the running service's relay scan publishes them.
    const relay = nats
      ? createOutboxRelay({ nc: nats.nc, models: outboxModels(conn), logger, signer: nats.signer })
      : null;
    // Indexes are the service's to create at start; an admin creates them only on a database the
    // service has not prepared yet (a first bootstrap), instead of on every run.
    const prepared = await conn.db
      ?.collection('users')
      .indexExists('emailKey_1')
      .catch(() => false);
    if (!prepared) await ensureIndexes(conn);
    return { deps, nats, startRelay: () => relay?.start(), flush: () => flushOutbox(relay), close };
  } catch (err) {
    await close();
    throw err;
  }
}
