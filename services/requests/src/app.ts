import type { NatsNames } from '@support-desk/contracts';
import {
  createHttpApp,
  type HealthState,
  type HttpApp,
  type Logger,
  type NatsConnection,
  type OutboxRelay,
  pingMongo,
  pingNats,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform';
import type { Connection } from 'mongoose';
import type { Core } from './app/core.js';
import { Directory } from './app/directory.js';
import { parseSlaPolicy } from './app/sla.js';
import type { RequestsConfig } from './config.js';
import { type IdentityLookup, natsIdentityLookup } from './events/identity-client.js';
import { attachmentRoutes } from './routes/attachments.js';
import { commentRoutes } from './routes/comments.js';
import { requestRoutes } from './routes/requests.js';
import { groupEntryModel, userEntryModel } from './store/directory.js';
import { attachmentFiles } from './store/files.js';
import { requestModel } from './store/requests.js';

export interface AppDeps {
  config: RequestsConfig;
  logger: Logger;
  conn: Connection;
  nc: NatsConnection;
  names: NatsNames;
  /** The outbox relay publishing this service's events (kicked after each write). */
  relay: Pick<OutboxRelay, 'kick'>;
  /** The clock (tests control it). */
  now?: () => Date;
  /** How to ask identity about users and groups (default: NATS request-reply). */
  identity?: IdentityLookup;
}

/** The use-case layer wired to its stores; shared by the HTTP app, the SLA monitor and the consumer. */
export function buildCore(deps: AppDeps): Core {
  const now = deps.now ?? (() => new Date());
  const identity =
    deps.identity ?? natsIdentityLookup(deps.nc, deps.names, deps.config.IDENTITY_RPC_TIMEOUT_MS);
  return {
    requests: requestModel(deps.conn),
    directory: new Directory(
      userEntryModel(deps.conn),
      groupEntryModel(deps.conn),
      identity,
      deps.logger.child({ component: 'directory' }),
      now,
    ),
    files: attachmentFiles(deps.conn),
    names: deps.names,
    relay: deps.relay,
    sla: { policy: parseSlaPolicy(deps.config.SLA_POLICY), warningRatio: deps.config.SLA_WARNING_RATIO },
    now,
    logger: deps.logger,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
    attachmentMaxBytes: deps.config.ATTACHMENT_MAX_BYTES,
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthState;
    core: Core;
  }
}

/** The HTTP app (never listens): health, the principal guard, and every public requests route. */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const core = buildCore(deps);
  const app = createHttpApp({ logger: deps.logger });
  const health = registerHealth(app, {
    mongodb: () => pingMongo(deps.conn),
    nats: () => pingNats(deps.nc),
  });
  app.decorate('health', health);
  app.decorate('core', core);
  requirePrincipal(app, deps.config.INTERNAL_AUTH_SECRET);
  requestRoutes(app, core);
  commentRoutes(app, core);
  // Encapsulated so the multipart parser applies to the upload route only.
  await app.register(async (scope) => attachmentRoutes(scope as HttpApp, core));
  return app;
}
