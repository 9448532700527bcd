import type { NatsNames } from '@support-desk/contracts';
import {
  type ComposedService,
  type Connection,
  ensureIndexes,
  pingMongo,
} from '@support-desk/platform/service';
import { ConfigError, type Logger, periodicTask } from '@support-desk/platform/core';
import {
  consumerAckFloor,
  createOutboxRelay,
  deadLetterStore,
  domainEventReader,
  forgetOnConfigChanges,
  type NatsConnection,
  pingNats,
  serveDeadLetters,
  serviceSigner,
  serviceVerifier,
} from '@support-desk/platform/messaging';
import {
  createHttpApp,
  registerOverloadControls,
  outsideCall,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform/http';
import { retrySchedule, type WebhooksConfig } from './config.js';
import { allowedRanges } from './events/destination.js';
import { type Intake, startIntake } from './events/intake.js';
import { createSender, type Send } from './events/sender.js';
import { serveWebhooksAdmin } from './routes/admin-rpc.js';
import { watchDeliveryBacklog } from './metrics.js';
import { registerRoutes } from './routes/index.js';
import { createDeliveriesRepository, deliveryModel } from './store/deliveries.js';
import { createLaneLeases } from './store/lane-leases.js';
import { createSubscriptionsRepository, subscriptionModel } from './store/subscriptions.js';
import { deliveryBacklog } from './use-cases/backlog.js';
import { completeStoredDeliveries, fanOut } from './use-cases/deliveries.js';
import { createDeliveryWorker } from './use-cases/delivery-worker.js';
import type { Deps } from './use-cases/deps.js';
import { createSecretBox } from './use-cases/secrets.js';
import { deleteExpiredSubscriptions } from './use-cases/subscriptions.js';

export interface WebhooksServiceDeps {
  config: WebhooksConfig;
  logger: Logger;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  /** Tests: a clock. */
  clock?: () => Date;
  /** Tests: wraps the sender (e.g. to count attempts); the real one is always underneath. */
  wrapSend?: (send: Send) => Send;
}

export interface WebhooksService extends ComposedService {
  deps: Deps;
}

function checkedRanges(spec: string) {
  try {
    return allowedRanges(spec);
  } catch (err) {
    throw new ConfigError(`WEBHOOKS_ALLOWED_RANGES: ${(err as Error).message}`);
  }
}

/**
 * The webhooks service: the subscriptions API over its own database, and the background work:
 * the intake (every domain event → deliveries), the delivery worker (signed attempts with
 * retries) and the outbox relay (subscription changes as events).
 */
export async function composeService(sd: WebhooksServiceDeps): Promise<WebhooksService> {
  const { config, logger, conn, nc, names } = sd;
  const attemptMs = config.WEBHOOKS_CONNECT_TIMEOUT_MS + config.WEBHOOKS_RESPONSE_TIMEOUT_MS;
  // A claim covers a lane's reads before an attempt, the attempt, and the writing of its outcome.
  if (config.WEBHOOKS_LEASE_MS < attemptMs * 3) {
    throw new ConfigError(
      'WEBHOOKS_LEASE_MS must be at least three times the connect and response timeouts together',
    );
  }
  subscriptionModel(conn);
  deliveryModel(conn);
  deadLetterStore(conn);
  const sender = createSender({
    connectTimeoutMs: config.WEBHOOKS_CONNECT_TIMEOUT_MS,
    responseTimeoutMs: config.WEBHOOKS_RESPONSE_TIMEOUT_MS,
    bodyCapBytes: config.WEBHOOKS_RESPONSE_BODY_CAP_BYTES,
    allowedRanges: config.WEBHOOKS_ALLOWED_RANGES,
    // As many as this replica's lanes could post to one receiver at once.
    connectionsPerReceiver: config.WEBHOOKS_CONCURRENCY,
  });
  let wakeWorker: Deps['wake'] = () => {};
  let forgetSubscription: (id: string) => void = () => {};
  const deps: Deps = {
    names,
    logger,
    clock: sd.clock ?? (() => new Date()),
    subscriptions: createSubscriptionsRepository(conn, { changed: (id) => forgetSubscription(id) }),
    deliveries: createDeliveriesRepository(conn, {
      retentionMs: config.WEBHOOKS_RETENTION_DAYS * 86_400_000,
      totalsTtlMs: config.LIST_TOTAL_CACHE_MS,
    }),
    leases: createLaneLeases(conn, config.WEBHOOKS_LEASE_MS),
    secrets: createSecretBox(config.WEBHOOKS_SECRET_KEY),
    send: sd.wrapSend ? sd.wrapSend(sender.send) : sender.send,
    allowedRanges: checkedRanges(config.WEBHOOKS_ALLOWED_RANGES),
    allowHttp: config.WEBHOOKS_ALLOW_HTTP,
    rotationOverlapMs: config.WEBHOOKS_ROTATION_OVERLAP_MS,
    // The worker's passes are background work, not the waking call's (its deadline, its abort).
    wake: (lanes, streamSeq) => outsideCall(() => wakeWorker(lanes, streamSeq)),
    intakeFloor: consumerAckFloor(nc, names.eventsStream, config.WEBHOOKS_DURABLE),
  };
  const app = createHttpApp({ logger });
  // Deadlines and admission before every route (issue 31: docs/api-guide.md, "Overload").
  await registerOverloadControls(app, config);
  const health = registerHealth(
    app,
    { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
    { downAfterMs: config.READINESS_DOWN_AFTER_MS },
  );
  requirePrincipal(app, { verifyKeys: config.PRINCIPAL_VERIFY_KEYS, audience: 'webhooks' });
  registerRoutes(app, deps);

  // Webhooks signs what it sends over NATS (its subscriptions' changes), and checks who signed
  // what it receives: every event, and the admin requests (identity's).
  const signer = serviceSigner('webhooks', config);
  const verifier = serviceVerifier(config);
  const read = domainEventReader(names, verifier);
  const relay = createOutboxRelay({ nc, models: [subscriptionModel(conn)], logger, signer });
  const worker = createDeliveryWorker(deps, {
    pollMs: config.WEBHOOKS_POLL_MS,
    sweepMs: config.WEBHOOKS_SWEEP_MS,
    concurrency: config.WEBHOOKS_CONCURRENCY,
    leaseMs: config.WEBHOOKS_LEASE_MS,
    attemptMs,
    subscriptionCacheMs: config.WEBHOOKS_SUBSCRIPTION_CACHE_MS,
    schedule: retrySchedule(config),
    disableAfterFailures: config.WEBHOOKS_DISABLE_AFTER_FAILURES,
    disableAfterMs: config.WEBHOOKS_DISABLE_AFTER_MS,
  });
  wakeWorker = worker.wake;
  forgetSubscription = worker.forgetSubscription;
  // Housekeeping: expired temporary subscriptions go, then finished deliveries past retention.
  const housekeeping = periodicTask({
    name: 'housekeeping',
    intervalMs: config.WEBHOOKS_RETENTION_SWEEP_MS,
    logger,
    run: async () => {
      await deleteExpiredSubscriptions(deps);
      if (config.WEBHOOKS_RETENTION_DAYS > 0) await deps.deliveries.purgeExpired(deps.clock());
    },
    onError: undefined,
  });
  const handleEvent = fanOut(deps);
  let intake: Intake | undefined;
  let deadLetters: { stop(): void } | undefined;
  let admin: { stop(): void } | undefined;
  let changes: { stop(): void } | undefined;
  let unwatchBacklog: (() => void) | undefined;
  return {
    app,
    health,
    deps,
    async start() {
      if (intake) return;
      await ensureIndexes(conn);
      await completeStoredDeliveries(deps);
      await deps.leases.prepare();
      relay.start();
      intake = await startIntake({
        nc,
        conn,
        names,
        logger,
        durable: config.WEBHOOKS_DURABLE,
        maxDeliver: config.WEBHOOKS_MAX_DELIVER,
        read,
        handle: handleEvent,
      });
      deadLetters = serveDeadLetters({
        nc,
        names,
        service: 'webhooks',
        conn,
        replay: (data, subject, signature) => handleEvent(read(data, subject, signature)),
        verifier,
        logger,
      });
      admin = serveWebhooksAdmin(nc, deps, verifier);
      // Every replica drops its worker's copy of a subscription another replica changed.
      changes = forgetOnConfigChanges({
        nc,
        names,
        verifier,
        prefix: 'whk_',
        forget: forgetSubscription,
        logger,
        what: "the worker's subscription copies",
      });
      worker.start();
      housekeeping.start();
      unwatchBacklog = watchDeliveryBacklog(() => deliveryBacklog(deps), config.WEBHOOKS_METRICS_CACHE_MS);
    },
    async close() {
      unwatchBacklog?.();
      deadLetters?.stop();
      admin?.stop();
      changes?.stop();
      await intake?.stop();
      // Attempts in hand finish (bounded by the timeouts) and their lanes are released.
      await worker.stop();
      await sender.close();
      await housekeeping.stop();
      await relay.stop();
    },
  };
}
