import type { NatsNames } from '@support-desk/contracts';
import type { ComposedService } from '@support-desk/platform/service';
import { createForwardedSigner, type Logger } from '@support-desk/platform/core';
import { createHttpApp, PUBLIC_MAX_HEADER_BYTES, registerHealth } from '@support-desk/platform/http';
import {
  type NatsConnection,
  pingNats,
  serviceSigner,
  serviceVerifier,
} from '@support-desk/platform/messaging';
import type { JWTVerifyGetKey } from 'jose';
import { type GatewayConfig, idempotencyInFlightMs, listFrom } from './config.js';
import { subscribeCredentialNotices } from './events/credential-notices.js';
import { createIdentityClient } from './events/identity-client.js';
import { createCredentialConcurrency, registerUpstreamBudget } from './routes/admission.js';
import { isCorsPath, registerCors } from './routes/cors.js';
import { registerDocs } from './routes/docs.js';
import { registerOAuthProxy } from './routes/oauth.js';
import { registerScimProxy } from './routes/scim.js';
import { createUpstreamHealth } from './routes/upstream-health.js';
import { refuseUnservable, registerPublicRoutes } from './routes/proxy.js';
import { countUpstreamAnswer } from './routes/upstream.js';
import { collectServedPaths } from './routes/unmatched.js';
import './routes/request-context.js';
import { createDenyList } from './store/deny-list.js';
import { createIdempotencyStore } from './store/idempotency-store.js';
import { createRateLimiter } from './store/rate-limiter.js';
import { connectRedis, type RedisClient, redisReady } from './store/redis-client.js';
import { createAuthFailureThrottle } from './use-cases/auth-failure-throttle.js';
import { createAuthenticator } from './use-cases/authenticator.js';
import { createIpAllowlist } from './use-cases/ip-allowlist.js';
import { createNoticeHandler } from './use-cases/notices.js';
import { createFastPrincipalSigner } from './use-cases/principal-signer.js';
import { createTokenVerifier } from './use-cases/token-verifier.js';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  nc: NatsConnection;
  names: NatsNames;
  /**
   * The rate limiter's, deny list's and idempotency store's Redis (default: a client for
   * REDIS_URL, or REDIS_CLUSTER_NODES, closed with the service).
   */
  redis?: RedisClient;
  /** Serve TLS directly (HSTS on every response then). */
  https?: { cert: string | Buffer; key: string | Buffer } | null;
  /** Tests may hand a local JWKS; production fetches IDENTITY_URL/.well-known/jwks.json. */
  keySet?: JWTVerifyGetKey;
}

export interface Gateway extends ComposedService {
  rateLimiterStats: { failOpen: number; failClosed: number; refusedLocally: number } | null;
}

/** `TRUSTED_PROXIES` → fastify trustProxy: only those hops may set X-Forwarded-For. */
function trustProxyFrom(value: string): string[] | false {
  const hops = listFrom(value);
  return hops.length > 0 ? hops : false;
}

/** The gateway: authentication, scopes, rate limits and the proxy to the services. */
export async function composeService(deps: GatewayDeps): Promise<Gateway> {
  const { config, logger, nc, names } = deps;
  const ownRedis = !deps.redis;
  const redis = deps.redis ?? connectRedis(config, logger);
  const app = createHttpApp({
    logger,
    bodyLimit: config.JSON_BODY_LIMIT_BYTES,
    trustProxy: trustProxyFrom(config.TRUSTED_PROXIES),
    https: deps.https ?? null,
    maxHeaderBytes: PUBLIC_MAX_HEADER_BYTES,
  });

  // Before any route: the table of served paths the 405 and 404 answers read.
  const servedPaths = collectServedPaths(app);

  if (deps.https) {
    const hsts = `max-age=${config.HSTS_MAX_AGE_SECONDS}; includeSubDomains`;
    app.addHook('onRequest', (_request, reply, done) => {
      reply.header('strict-transport-security', hsts);
      done();
    });
  }

  await registerCors(app, config);
  // Each call's time budget, from its arrival (issue 31: docs/api-guide.md, "Overload").
  registerUpstreamBudget(app, config.UPSTREAM_TIMEOUT_MS);

  const upstreams = {
    requests: listFrom(config.REQUESTS_URL),
    identity: listFrom(config.IDENTITY_URL),
    audit: listFrom(config.AUDIT_URL),
    webhooks: listFrom(config.WEBHOOKS_URL),
  };
  // The gateway signs its requests to identity, and checks that notices are identity's.
  const signer = serviceSigner('gateway', config);
  const verifier = serviceVerifier(config);
  const identity = createIdentityClient({
    nc,
    names,
    signer,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    apiKeyTtlMs: config.API_KEY_CACHE_TTL_MS,
    userTtlMs: config.USER_CACHE_TTL_MS,
    clientTtlMs: config.CLIENT_CACHE_TTL_MS,
    staleIfErrorMs: config.CREDENTIAL_STALE_IF_ERROR_MS,
  });
  const tokens = createTokenVerifier({
    jwksUrl: config.JWKS_URL ?? new URL('/.well-known/jwks.json', upstreams.identity[0]).toString(),
    issuer: config.OAUTH_ISSUER,
    audience: config.OAUTH_AUDIENCE,
    algorithms: listFrom(config.OAUTH_ALGORITHMS),
    clockToleranceSeconds: config.OAUTH_CLOCK_TOLERANCE_SECONDS,
    jwksCooldownMs: config.JWKS_COOLDOWN_MS,
    jwksCacheMaxAgeMs: config.JWKS_CACHE_MAX_AGE_MS,
    cacheTtlMs: config.TOKEN_CACHE_TTL_MS,
    cacheMax: config.TOKEN_CACHE_MAX,
    keySet: deps.keySet,
  });
  const denyList = createDenyList({
    redis,
    prefix: config.REDIS_KEY_PREFIX,
    ttlSeconds: config.DENY_LIST_TTL_SECONDS,
    leewaySeconds: config.OAUTH_CLOCK_TOLERANCE_SECONDS,
    cacheTtlMs: config.DENY_CACHE_TTL_MS,
    logger,
  });
  const authenticator = createAuthenticator({
    identity,
    tokens,
    denyList,
    allowlist: createIpAllowlist(),
    defaultPlan: config.DEFAULT_PLAN,
  });
  const rateLimiter = config.RATE_LIMIT_ENABLED
    ? createRateLimiter({
        redis,
        prefix: config.RATE_LIMIT_PREFIX,
        windowSeconds: config.RATE_LIMIT_WINDOW_SECONDS,
        failureMode: config.RATE_LIMIT_FAILURE_MODE,
        logger,
      })
    : null;

  const health = registerHealth(
    app,
    { redis: () => redis.ping(), nats: () => pingNats(nc) },
    { downAfterMs: config.READINESS_DOWN_AFTER_MS },
  );

  const handleNotice = createNoticeHandler(identity, tokens, denyList);
  let notices: Awaited<ReturnType<typeof subscribeCredentialNotices>> | undefined;

  refuseUnservable(app);
  // Before the proxying routes, so every one of them counts its service's answers.
  app.addHook('onResponse', countUpstreamAnswer);
  const upstreamHealth = createUpstreamHealth({ intervalMs: config.UPSTREAM_HEALTH_INTERVAL_MS, logger });
  // One count of failed authentications per address, for /v1 and SCIM alike.
  const authFailures = createAuthFailureThrottle({
    limiter: rateLimiter,
    limit: config.AUTH_FAILURES_PER_IP,
  });
  await registerPublicRoutes(app, {
    config,
    upstreamHealth,
    upstreams,
    authenticator,
    authFailures,
    rateLimiter,
    concurrency:
      config.CREDENTIAL_CONCURRENCY > 0 ? createCredentialConcurrency(config.CREDENTIAL_CONCURRENCY) : null,
    signPrincipal: createFastPrincipalSigner(config.PRINCIPAL_SIGNING_KEY, {
      batchMax: config.PRINCIPAL_BATCH_MAX,
    }),
    idempotency: createIdempotencyStore({
      redis,
      prefix: config.REDIS_KEY_PREFIX,
      ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS,
      inFlightMs: idempotencyInFlightMs(config),
    }),
  });
  await registerOAuthProxy(app, {
    config,
    identityUrls: upstreams.identity,
    upstreamHealth,
    rateLimiter,
    signForwarded: createForwardedSigner(config.PRINCIPAL_SIGNING_KEY),
  });
  await registerScimProxy(app, {
    config,
    authFailures,
    identityUrls: upstreams.identity,
    upstreamHealth,
    rateLimiter,
    signForwarded: createForwardedSigner(config.PRINCIPAL_SIGNING_KEY),
  });
  await registerDocs(app, { serverUrl: config.OAUTH_ISSUER });
  servedPaths.registerUnmatched({
    corsPath: listFrom(config.CORS_ALLOWED_ORIGINS).length > 0 ? isCorsPath : null,
  });

  return {
    app,
    health,
    rateLimiterStats: rateLimiter?.stats ?? null,
    async start() {
      if (notices) return;
      upstreamHealth.start();
      if (ownRedis) {
        await redisReady(redis, 5_000).catch((err) =>
          logger.warn({ err: (err as Error).message }, 'redis not reachable yet'),
        );
      }
      // Every replica listens to credential notices from its start until it closes.
      notices = await subscribeCredentialNotices({ nc, names, verifier, logger, handle: handleNotice });
    },
    async close() {
      upstreamHealth.stop();
      await notices?.stop();
      if (ownRedis) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
