import type { NatsNames } from '@support-desk/contracts';
import {
  type ComposedService,
  type Connection,
  ensureIndexes,
  pingMongo,
} from '@support-desk/platform/service';
import {
  createHttpApp,
  registerOverloadControls,
  createOneTimeIds,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform/http';
import {
  createOutboxRelay,
  deadLetterStore,
  domainEventReader,
  type NatsConnection,
  type OutboxRelay,
  pingNats,
  type RunningConsumer,
  serveDeadLetters,
  serviceSigner,
  serviceVerifier,
} from '@support-desk/platform/messaging';
import { identityRpcClient } from '@support-desk/platform/clients';
import type { IdentityRpcClient, Logger, PeriodicTask } from '@support-desk/platform/core';
import type { RequestsConfig } from './config.js';
import { replayReadModelEvent, startReadModelConsumer } from './events/read-model-consumer.js';
import { serveRequestsAdmin } from './routes/admin-rpc.js';
import { registerRoutes } from './routes/index.js';
import { createDirectoryRepository } from './store/directory.js';
import { attachmentFiles } from './store/files.js';
import { requestModel } from './store/requests.js';
import { createBulkJobsRepository } from './store/bulk-jobs.js';
import { createRequestTrash, purgeRecordModel } from './store/request-trash.js';
import { createRequestsRepository } from './store/requests-repository.js';
import { createSlaAlertsRepository, slaAlertModel } from './store/sla-alerts.js';
import { createSlaPoliciesRepository, slaPolicyModel } from './store/sla-policies.js';
import type { Deps } from './use-cases/deps.js';
import { Directory } from './use-cases/directory.js';
import { completeStoredRequests } from './use-cases/request-lists.js';
import { requireTemporal } from './use-cases/business-time.js';
import { parseSlaPolicy } from './use-cases/sla.js';
import { createSlaMonitor } from './use-cases/sla-monitor.js';
import { completeTrashKeys, createTrashPurge } from './use-cases/trash.js';
import { createBulkJobsPurge, createBulkWorker } from './use-cases/bulk-jobs.js';

export interface RequestsServiceDeps {
  config: RequestsConfig;
  logger: Logger;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  /** The clock (tests move it). */
  clock?: () => Date;
  /** How to ask identity (default: its RPC over NATS). */
  identity?: IdentityRpcClient;
  /** The outbox relay's safety-net scan interval (tests shorten it). */
  relayPollIntervalMs?: number;
}

export interface RequestsService extends ComposedService {
  /** The use cases' dependencies (tests drive the monitor and the read model through them). */
  deps: Deps;
  relay: OutboxRelay;
  /** The trash's purge pass (tests run it with `runNow`). */
  trashPurge: PeriodicTask<number>;
  /** The bulk-jobs worker (tests run it with `runNow`). */
  bulkWorker: PeriodicTask<number>;
  /** The purge of completed bulk jobs past their retention (tests run it with `runNow`). */
  bulkJobsPurge: PeriodicTask<number>;
}

/** The requests service: its use cases over its own database, the HTTP app and its workers. */
export async function composeService(sd: RequestsServiceDeps): Promise<RequestsService> {
  const { config, logger, conn, nc, names } = sd;
  requireTemporal();
  const clock = sd.clock ?? (() => new Date());
  // Requests signs what it sends over NATS, and checks who signed what it receives.
  const signer = serviceSigner('requests', config);
  const verifier = serviceVerifier(config);
  const identity = sd.identity ?? identityRpcClient(nc, names, config.IDENTITY_RPC_TIMEOUT_MS, signer);
  const requests = createRequestsRepository(conn, {
    maxBytes: config.REQUEST_DOCUMENT_MAX_BYTES,
    totalsTtlMs: config.LIST_TOTAL_CACHE_MS,
  });
  const deps: Deps = {
    requests,
    slaAlerts: createSlaAlertsRepository(conn),
    slaPolicies: createSlaPoliciesRepository(conn, { ttlMs: config.SLA_POLICY_CACHE_TTL_MS, clock }),
    directory: new Directory(
      createDirectoryRepository(conn),
      identity,
      logger.child({ component: 'directory' }),
      clock,
      config.DIRECTORY_CACHE_TTL_MS,
    ),
    files: attachmentFiles(conn),
    names,
    sla: { policy: parseSlaPolicy(config.SLA_POLICY), warningRatio: config.SLA_WARNING_RATIO },
    clock,
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL,
    attachmentMaxBytes: config.ATTACHMENT_MAX_BYTES,
    lists: { searchMaxTimeMs: config.REQUEST_SEARCH_MAX_TIME_MS, changesSettleMs: config.CHANGES_SETTLE_MS },
    trash: createRequestTrash(conn, requests.prepareWrite),
    trashRetentionMs: config.TRASH_RETENTION_DAYS * 24 * 3_600_000,
    bulk: {
      store: createBulkJobsRepository(conn),
      wake: () => void bulkWorker.runNow(),
      retentionMs: config.BULK_JOB_RETENTION_DAYS * 24 * 3_600_000,
    },
  };

  const app = createHttpApp({ logger });
  // Deadlines and admission before every route (issue 31: docs/api-guide.md, "Overload").
  await registerOverloadControls(app, config);
  const health = registerHealth(
    app,
    { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
    { downAfterMs: config.READINESS_DOWN_AFTER_MS },
  );
  // Uploads stream in: their assertions carry a one-time id, spent in this service's database.
  const oneTimeIds = createOneTimeIds(conn, { logger });
  requirePrincipal(app, { verifyKeys: config.PRINCIPAL_VERIFY_KEYS, audience: 'requests', oneTimeIds });
  await registerRoutes(app, deps);

  const relay = createOutboxRelay({
    nc,
    models: [requestModel(conn), slaAlertModel(conn), slaPolicyModel(conn), purgeRecordModel(conn)],
    logger,
    signer,
    ...(sd.relayPollIntervalMs ? { pollIntervalMs: sd.relayPollIntervalMs } : {}),
  });
  const monitor = createSlaMonitor(deps, { intervalMs: config.SLA_MONITOR_INTERVAL_MS });
  const trashPurge = createTrashPurge(deps, { intervalMs: config.TRASH_PURGE_INTERVAL_MS });
  const bulkWorker = createBulkWorker(deps, {
    pollMs: config.BULK_JOBS_POLL_MS,
    leaseMs: config.BULK_JOB_LEASE_MS,
  });
  const bulkJobsPurge = createBulkJobsPurge(deps, { intervalMs: config.BULK_JOB_PURGE_INTERVAL_MS });
  let consumer: RunningConsumer | undefined;
  let deadLetters: { stop(): void } | undefined;
  let admin: { stop(): void } | undefined;
  let started = false;
  return {
    app,
    health,
    deps,
    relay,
    trashPurge,
    bulkWorker,
    bulkJobsPurge,
    async start() {
      if (started) return;
      started = true;
      await ensureIndexes(conn);
      await deps.files.ensureIndexes();
      await completeStoredRequests(deps);
      await completeTrashKeys(deps);
      relay.start();
      oneTimeIds.purge.start();
      const refreshers = {
        refreshUser: (id: string) => deps.directory.refreshUser(id),
        refreshGroup: (id: string) => deps.directory.refreshGroup(id),
        read: domainEventReader(names, verifier),
      };
      consumer = await startReadModelConsumer({
        nc,
        names,
        logger,
        durable: config.READ_MODEL_DURABLE,
        ...refreshers,
        deadLetter: deadLetterStore(conn).write,
      });
      deadLetters = serveDeadLetters({
        nc,
        names,
        service: 'requests',
        conn,
        replay: replayReadModelEvent(refreshers),
        verifier,
        logger,
      });
      admin = serveRequestsAdmin(nc, deps, verifier);
      if (config.SLA_MONITOR_ENABLED) monitor.start();
      trashPurge.start();
      bulkWorker.start();
      bulkJobsPurge.start();
    },
    async close() {
      deadLetters?.stop();
      admin?.stop();
      await monitor.stop();
      await trashPurge.stop();
      await bulkWorker.stop();
      await bulkJobsPurge.stop();
      await oneTimeIds.purge.stop();
      await consumer?.stop();
      await relay.stop();
    },
  };
}
