import type { NatsNames } from '@support-desk/contracts';
import {
  createHttpApp,
  type HealthState,
  type HttpApp,
  type Logger,
  type NatsConnection,
  pingNats,
  registerHealth,
} from '@support-desk/platform';
import type { Redis } from 'ioredis';
import type { JWTVerifyGetKey } from 'jose';
import './app/types.js';
import { createAuthenticator } from './app/authenticator.js';
import { createDenyList } from './app/denyList.js';
import { createIdentityClient } from './app/identityClient.js';
import { createIpAllowlist } from './app/ipAllowlist.js';
import { createNoticeHandler } from './app/notices.js';
import { createFastPrincipalSigner } from './app/principalSigner.js';
import { createRateLimiter } from './app/rateLimiter.js';
import { createTokenVerifier } from './app/tokenVerifier.js';
import { type GatewayConfig, listFrom } from './config.js';
import { subscribeCredentialNotices } from './events/credentialNotices.js';
import { registerDocs } from './routes/docs.js';
import { registerOAuthProxy } from './routes/oauth.js';
import { registerPublicRoutes } from './routes/proxy.js';

export interface GatewayDeps {
  config: GatewayConfig;
  logger: Logger;
  nc: NatsConnection;
  names: NatsNames;
  redis: Redis;
  /** Serve TLS directly (HSTS on every response then). */
  https?: { cert: string | Buffer; key: string | Buffer } | null;
  /** Tests may hand a local JWKS; production fetches IDENTITY_URL/.well-known/jwks.json. */
  keySet?: JWTVerifyGetKey;
}

export interface Gateway {
  app: HttpApp;
  health: HealthState;
  rateLimiterStats: { failOpen: number; failClosed: number } | null;
}

/** `TRUSTED_PROXIES` → fastify trustProxy: only those hops may set X-Forwarded-For. */
export function trustProxyFrom(value: string): string[] | false {
  const hops = listFrom(value);
  return hops.length > 0 ? hops : false;
}

export async function buildApp(deps: GatewayDeps): Promise<Gateway> {
  const { config, logger, nc, names, redis } = deps;
  const app = createHttpApp({
    logger,
    bodyLimit: config.JSON_BODY_LIMIT_BYTES,
    trustProxy: trustProxyFrom(config.TRUSTED_PROXIES),
    https: deps.https ?? null,
  });

  if (deps.https) {
    const hsts = `max-age=${config.HSTS_MAX_AGE_SECONDS}; includeSubDomains`;
    app.addHook('onRequest', async (_request, reply) => {
      reply.header('strict-transport-security', hsts);
    });
  }

  const identity = createIdentityClient({
    nc,
    names,
    rpcTimeoutMs: config.RPC_TIMEOUT_MS,
    apiKeyTtlMs: config.API_KEY_CACHE_TTL_MS,
    userTtlMs: config.USER_CACHE_TTL_MS,
    clientTtlMs: config.CLIENT_CACHE_TTL_MS,
  });
  const tokens = createTokenVerifier({
    jwksUrl: config.JWKS_URL ?? new URL('/.well-known/jwks.json', config.IDENTITY_URL).toString(),
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
    // Plus the exp leeway: a token is still accepted that long after its exp.
    ttlSeconds: config.DENY_LIST_TTL_SECONDS + config.OAUTH_CLOCK_TOLERANCE_SECONDS,
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

  const health = registerHealth(app, {
    redis: () => redis.ping(),
    nats: () => pingNats(nc),
  });

  // Every replica listens to credential notices from the moment it is ready until it closes.
  const handleNotice = createNoticeHandler(identity, tokens, denyList);
  let notices: Awaited<ReturnType<typeof subscribeCredentialNotices>> | undefined;
  app.addHook('onReady', async () => {
    notices = await subscribeCredentialNotices({ nc, names, logger, handle: handleNotice });
  });
  app.addHook('onClose', async () => {
    await notices?.stop();
  });

  const upstreams = { requests: config.REQUESTS_URL, identity: config.IDENTITY_URL, audit: config.AUDIT_URL };
  await registerPublicRoutes(app, {
    config,
    upstreams,
    authenticator,
    rateLimiter,
    signPrincipal: createFastPrincipalSigner(config.INTERNAL_AUTH_SECRET),
  });
  await registerOAuthProxy(app, { config, identityUrl: config.IDENTITY_URL, rateLimiter });
  registerDocs(app, { serverUrl: config.OAUTH_ISSUER });

  return { app, health, rateLimiterStats: rateLimiter?.stats ?? null };
}
