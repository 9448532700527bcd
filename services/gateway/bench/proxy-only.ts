/**
 * "Proxy only" for the bench: the gateway's own proxy routes (path checks, the route table, the
 * signed principal, the upstream pools) with one fixed caller instead of authentication and no
 * rate limiting. Configured from the same environment as a gateway; what the full gateway costs
 * beyond this is authentication and limits. Never a production entry point.
 */
import { createHttpApp, registerHealth } from '@support-desk/platform/http';
import { gatewayLogger, listenPort, listFrom, loadGatewayConfig } from '../src/config.js';
import { createUpstreamHealth } from '../src/routes/upstream-health.js';
import { refuseUnservable, registerPublicRoutes } from '../src/routes/proxy.js';
import '../src/routes/request-context.js';
import { createAuthFailureThrottle } from '../src/use-cases/auth-failure-throttle.js';
import type { Authenticator, Caller } from '../src/use-cases/authenticator.js';
import { createFastPrincipalSigner } from '../src/use-cases/principal-signer.js';

const config = loadGatewayConfig();
const logger = gatewayLogger(config);
const app = createHttpApp({ logger, bodyLimit: config.JSON_BODY_LIMIT_BYTES });
registerHealth(app, {});

// One object for every call, as the authenticator's cache hands out: its JSON is made once.
const caller: Caller = {
  principal: {
    userId: 'usr_bench',
    email: 'bench@example.com',
    name: 'Bench',
    role: 'admin',
    scopes: ['admin'],
    credential: { type: 'api_key', id: 'key_bench' },
  },
  scopes: ['admin'],
  rateSubject: 'key:key_bench',
  limits: { general: 0, events: 0 },
  plan: 'enterprise',
};
const fixedCaller = { authenticate: async () => caller } as unknown as Authenticator;

refuseUnservable(app);
const upstreamHealth = createUpstreamHealth({ intervalMs: config.UPSTREAM_HEALTH_INTERVAL_MS, logger });
await registerPublicRoutes(app, {
  config,
  upstreamHealth,
  upstreams: {
    requests: listFrom(config.REQUESTS_URL),
    identity: listFrom(config.IDENTITY_URL),
    audit: listFrom(config.AUDIT_URL),
    webhooks: listFrom(config.WEBHOOKS_URL),
  },
  authenticator: fixedCaller,
  authFailures: createAuthFailureThrottle({ limiter: null, limit: 0 }),
  concurrency: null,
  rateLimiter: null,
  signPrincipal: createFastPrincipalSigner(config.PRINCIPAL_SIGNING_KEY, {
    batchMax: config.PRINCIPAL_BATCH_MAX,
  }),
  idempotency: null,
});
await app.listen({ host: config.HOST, port: listenPort(config) });
// A clean exit, so `--cpu-prof` writes its profile.
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
