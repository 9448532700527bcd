import {
  createHttpApp,
  type HealthCheck,
  type Logger,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform';
import type { Connection } from 'mongoose';
import { eventsService } from './app/events.js';
import { registerEventRoutes } from './routes/events.js';
import { eventQueries } from './store/event-queries.js';

export interface AuditAppDeps {
  logger: Logger;
  conn: Connection;
  internalSecret: string;
  /** Dependencies `/readyz` checks (mongodb, nats). */
  checks?: Record<string, HealthCheck>;
}

/** The HTTP side of the audit service; never listens (server.ts does), testable with inject. */
export function buildApp({ logger, conn, internalSecret, checks = {} }: AuditAppDeps) {
  const app = createHttpApp({ logger });
  const health = registerHealth(app, checks);
  requirePrincipal(app, internalSecret);
  registerEventRoutes(app, eventsService(eventQueries(conn)));
  return { app, health };
}
