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
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform/http';
import {
  deadLetterStore,
  domainEventReader,
  type NatsConnection,
  pingNats,
  serveDeadLetters,
  serviceVerifier,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';
import { type AuditConfig, ingestionSettings } from './config.js';
import { type Ingestion, replayDeadLetter, startIngestion } from './events/ingestion.js';
import { registerRoutes } from './routes/index.js';
import { eventModel } from './store/event-model.js';
import { eventQueries } from './store/event-queries.js';
import { type Retention, startRetention } from './store/retention.js';
import { completeStoredEvents, eventsService } from './use-cases/events.js';
import { eventExporter } from './use-cases/export.js';
import { requestHistory } from './use-cases/request-events.js';

export interface AuditDeps {
  config: AuditConfig;
  logger: Logger;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
}

/**
 * The audit service: the read-only events API over its own database, and the background work
 * that fills it (ingestion of every domain event) and trims it (retention).
 */
export async function composeService(deps: AuditDeps): Promise<ComposedService> {
  const { config, logger, conn, nc, names } = deps;
  eventModel(conn);
  deadLetterStore(conn);
  const app = createHttpApp({ logger });
  // Deadlines and admission before every route (issue 31: docs/api-guide.md, "Overload").
  await registerOverloadControls(app, config);
  const health = registerHealth(
    app,
    { mongodb: () => pingMongo(conn), nats: () => pingNats(nc) },
    { downAfterMs: config.READINESS_DOWN_AFTER_MS },
  );
  requirePrincipal(app, { verifyKeys: config.PRINCIPAL_VERIFY_KEYS, audience: 'audit' });
  // Audit sends nothing over NATS; it checks who signed every event (and operator request).
  const verifier = serviceVerifier(config);
  const read = domainEventReader(names, verifier);
  const store = eventQueries(conn, { totalsTtlMs: config.LIST_TOTAL_CACHE_MS });
  registerRoutes(app, {
    events: eventsService(store),
    requestHistory: requestHistory(store),
    exportEvents: eventExporter(store, { batchSize: config.AUDIT_EXPORT_BATCH_SIZE }),
  });

  let retention: Retention | undefined;
  let ingestion: Ingestion | undefined;
  let deadLetters: { stop(): void } | undefined;
  return {
    app,
    health,
    async start() {
      if (ingestion) return;
      await ensureIndexes(conn);
      await completeStoredEvents(store, logger);
      retention = await startRetention({
        conn,
        logger,
        days: config.AUDIT_RETENTION_DAYS,
        sweepIntervalMs: config.AUDIT_RETENTION_SWEEP_MS,
        sweepBatch: config.AUDIT_RETENTION_SWEEP_BATCH,
      });
      ingestion = await startIngestion({ nc, conn, names, logger, read, ...ingestionSettings(config) });
      deadLetters = serveDeadLetters({
        nc,
        names,
        service: 'audit',
        conn,
        replay: replayDeadLetter(conn, read),
        verifier,
        logger,
      });
    },
    async close() {
      deadLetters?.stop();
      // Stops pulling, writes the batch in hand and acks it; the rest is redelivered on restart.
      await ingestion?.stop();
      await retention?.stop();
    },
  };
}
