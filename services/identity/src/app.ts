import {
  createHttpApp,
  type HealthCheck,
  type HttpApp,
  registerHealth,
  requirePrincipal,
} from '@support-desk/platform';
import type { Deps } from './app/context.js';
import type { Keyring } from './oauth/keys.js';
import { groupRoutes } from './routes/groups.js';
import { oauthPageRoutes } from './routes/oauthPages.js';
import { oauthTokenRoutes } from './routes/oauthToken.js';
import { wellKnownRoutes } from './routes/wellKnown.js';
import { userRoutes } from './routes/users.js';

export interface AppDeps extends Deps {
  /** Access-token signing keys (createKeyring). */
  keyring: Keyring;
  /** Readiness checks (mongodb, nats). */
  health?: Record<string, HealthCheck>;
}

/** The identity HTTP app (never listens; tests use `inject` or listen on port 0). */
export async function buildApp(deps: AppDeps): Promise<HttpApp> {
  const app = createHttpApp({ logger: deps.logger, trustProxy: deps.config.TRUST_PROXY });
  const health = registerHealth(app, deps.health ?? {});
  app.decorate('health', health);
  requirePrincipal(app, deps.config.INTERNAL_AUTH_SECRET);
  userRoutes(app, deps);
  groupRoutes(app, deps);
  oauthPageRoutes(app, deps);
  oauthTokenRoutes(app, deps, deps.keyring);
  wellKnownRoutes(app, deps, deps.keyring);
  await app.ready();
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    health: import('@support-desk/platform').HealthState;
  }
}
