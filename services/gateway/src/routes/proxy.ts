import replyFrom from '@fastify/reply-from';
import { hasScope, type OwningService, type PublicRoute } from '@support-desk/contracts';
import { errorBody, type HttpApp, isAppError } from '@support-desk/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../use-cases/authenticator.js';
import type { FastPrincipalSigner } from '../use-cases/principal-signer.js';
import { type RateLimiter, RateLimitUnavailableError, rateLimitHeaders } from '../store/rate-limiter.js';
import {
  isUpload,
  MULTIPART_OVERHEAD_BYTES,
  routesByService,
  type Upstreams,
} from '../use-cases/route-table.js';
import type { GatewayConfig } from '../config.js';
import { fromOptions, limitStream, payloadTooLarge, poolOptions } from './upstream.js';

export interface ProxyDeps {
  config: GatewayConfig;
  upstreams: Upstreams;
  authenticator: Authenticator;
  rateLimiter: RateLimiter | null;
  signPrincipal: FastPrincipalSigner;
}

function sendError(
  reply: FastifyReply,
  status: number,
  code: Parameters<typeof errorBody>[0],
  message: string,
) {
  return reply.code(status).send(errorBody(code, message));
}

/**
 * Authentication → IP allowlist → rate limit → scope, before the body is read. Failed
 * authentication and refused addresses consume no quota; a scope refusal does (it is a call the
 * credential made) and carries the rate-limit headers like every other answer to a credential.
 */
function guard({ authenticator, rateLimiter, signPrincipal }: ProxyDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.config.publicRoute as PublicRoute;
    let caller: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      caller = await authenticator.authenticate(request.headers.authorization, request.ip);
    } catch (err) {
      if (!isAppError(err)) throw err;
      return reply.headers(err.headers).code(err.statusCode).send(errorBody(err.code, err.message));
    }
    if (rateLimiter) {
      const limit = caller.limits[route.bucket];
      let decision: Awaited<ReturnType<RateLimiter['take']>>;
      try {
        decision = await rateLimiter.take(`${route.bucket}:${caller.rateSubject}`, limit);
      } catch (err) {
        if (!(err instanceof RateLimitUnavailableError)) throw err;
        return sendError(reply, 503, 'SERVICE_UNAVAILABLE', 'Rate limiting is unavailable; retry later');
      }
      if (decision) {
        reply.headers(rateLimitHeaders(route.bucket, decision));
        if (!decision.allowed) {
          reply.header('retry-after', String(decision.retryAfter));
          return sendError(
            reply,
            429,
            'RATE_LIMITED',
            `Rate limit exceeded for the ${route.bucket} bucket: ${limit} requests per ` +
              `${decision.windowSeconds} seconds; retry after ${decision.retryAfter} s`,
          );
        }
      }
    }
    if (route.scope !== 'authenticated' && !hasScope(caller.scopes, route.scope)) {
      return sendError(reply, 403, 'FORBIDDEN', `This operation requires the ${route.scope} scope`);
    }
    request.caller = caller;
    // Bound to the one service and the very call forwarded (reply.from forwards request.url).
    request.principalAssertion = signPrincipal(caller.principal, {
      clientIp: request.ip ?? null,
      userAgent: request.headers['user-agent'] ?? null,
      requestId: request.id,
      audience: route.service,
      method: request.method,
      url: request.url,
    });
  };
}

/** Registers every PUBLIC_ROUTES entry, per owning service, as an authenticated proxy route. */
export async function registerPublicRoutes(app: HttpApp, deps: ProxyDeps): Promise<void> {
  const onRequest = guard(deps);
  const hooks = fromOptions(false);
  const { config } = deps;
  for (const [service, routes] of routesByService()) {
    await app.register(async (scope) => {
      // Bodies are not parsed here: they stream to the service, counted against their limit.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (request, payload, done) => {
        const route = request.routeOptions.config.publicRoute;
        const limit =
          route && isUpload(route)
            ? config.ATTACHMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES
            : config.JSON_BODY_LIMIT_BYTES;
        const declared = Number(request.headers['content-length'] ?? 0);
        if (declared > limit) {
          done(payloadTooLarge(limit), undefined);
          return;
        }
        done(null, limitStream(request, payload, limit));
      });
      await scope.register(replyFrom, {
        base: deps.upstreams[service as OwningService],
        undici: poolOptions(config),
        disableRequestLogging: true,
      });
      for (const route of routes) {
        scope.route({
          method: route.method,
          url: route.path,
          exposeHeadRoute: false,
          config: { publicRoute: route },
          onRequest,
          handler: (request, reply) => reply.from(request.url, hooks),
        });
      }
    });
  }
}
