import { type ComposedService, ensureIndexes, pingMongo } from '@support-desk/platform/service';
import {
  createHttpApp,
  registerOverloadControls,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform/http';
import {
  createOutboxRelay,
  forgetOnConfigChanges,
  type NatsConnection,
  type OutboxRelay,
  pingNats,
  serviceSigner,
  serviceVerifier,
} from '@support-desk/platform/messaging';
import { webhooksAdminClient, requestsAdminClient, serveIdentityRpc } from '@support-desk/platform/clients';
import type { IdentityServiceConfig } from './config.js';
import { createKeyring, type Keyring } from './oauth/keys.js';
import { registerRoutes } from './routes/index.js';
import { outboxModels } from './store/index.js';
import { registerBrowserPages } from './web/index.js';
import type { Deps } from './use-cases/deps.js';
import { createHousekeeping } from './use-cases/housekeeping.js';
import { createLdapSyncScheduler } from './use-cases/ldap-sync.js';
import { identityRpcAnswers } from './use-cases/rpc-answers.js';
import { identityDeps, type IdentityDepsInput } from './wiring.js';
import { completeStoredUsers } from './use-cases/user-list-keys.js';

export interface IdentityServiceDeps extends IdentityDepsInput {
  config: IdentityServiceConfig;
  nc: NatsConnection;
}

export interface IdentityService extends ComposedService {
  deps: Deps;
  keyring: Keyring;
  relay: OutboxRelay;
}

/**
 * The identity service: users, groups, credentials and the OAuth server over its own database;
 * its background work is the outbox relay, identity's RPC answers, housekeeping, the scheduled
 * LDAP directory syncs, and hearing other replicas' group changes (the group names kept for user
 * views).
 */
export async function composeService(sd: IdentityServiceDeps): Promise<IdentityService> {
  const { config, logger, conn, nc, names } = sd;
  const deps = identityDeps(sd);
  const keyring = await createKeyring(config, deps.clock);
  const app = createHttpApp({ logger });
  // Deadlines and admission before every route (issue 31: docs/api-guide.md, "Overload").
  await registerOverloadControls(app, config);
  const health = registerHealth(
    app,
    { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
    { downAfterMs: config.READINESS_DOWN_AFTER_MS },
  );
  requirePrincipal(app, { verifyKeys: config.PRINCIPAL_VERIFY_KEYS, audience: 'identity' });
  // Identity signs what it sends over NATS, and checks who signed what it receives.
  const signer = serviceSigner('identity', config);
  const verifier = serviceVerifier(config);
  await registerRoutes(app, deps, keyring);
  // The browser pages; the console's webhook pages ask the webhooks service, its SLA policy and
  // trash pages the requests service (their admin RPCs).
  registerBrowserPages(
    app,
    deps,
    webhooksAdminClient(nc, names, signer),
    requestsAdminClient(nc, names, signer),
  );

  const relay = createOutboxRelay({ nc, models: outboxModels(conn), logger, signer });
  const housekeeping = createHousekeeping(deps, { intervalMs: config.IDENTITY_HOUSEKEEPING_INTERVAL_MS });
  const ldapSyncs = createLdapSyncScheduler(deps, { tickMs: config.IDENTITY_LDAP_SYNC_TICK_MS });
  let rpc: { stop(): void } | undefined;
  let groupChanges: { stop(): void } | undefined;
  return {
    app,
    health,
    deps,
    keyring,
    relay,
    async start() {
      if (rpc) return;
      await ensureIndexes(conn);
      await completeStoredUsers(deps);
      relay.start();
      // Every replica forgets the group names another replica's rename or deletion changed.
      groupChanges = forgetOnConfigChanges({
        nc,
        names,
        verifier,
        prefix: 'grp_',
        forget: deps.groups.forget,
        logger,
        what: 'group names',
      });
      rpc = serveIdentityRpc(nc, names, identityRpcAnswers(deps), { verifier, logger });
      if (config.IDENTITY_HOUSEKEEPING_INTERVAL_MS > 0) housekeeping.start();
      if (config.IDENTITY_LDAP_SYNC_TICK_MS > 0) ldapSyncs.start();
    },
    async close() {
      rpc?.stop();
      groupChanges?.stop();
      await housekeeping.stop();
      await ldapSyncs.stop();
      await relay.stop();
    },
  };
}
