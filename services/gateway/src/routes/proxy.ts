import replyFrom from '@fastify/reply-from';
import { hasScope, type OwningService, type PublicRoute } from '@support-desk/contracts';
import { type AppError, humanBytes, isAppError } from '@support-desk/platform/core';
import { errorBody, type HttpApp } from '@support-desk/platform/http';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../use-cases/authenticator.js';
import type { FastPrincipalSigner } from '../use-cases/principal-signer.js';
import {
  type RateDecision,
  type RateLimiter,
  RateLimitUnavailableError,
  rateLimitHeaders,
} from '../store/rate-limiter.js';
import type { AuthFailureThrottle } from '../use-cases/auth-failure-throttle.js';
import { takesIdempotencyKey } from '../use-cases/idempotency.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { CredentialConcurrency } from './admission.js';
import { idempotencyHooks } from './idempotency.js';
import type { UpstreamHealth } from './upstream-health.js';
import { clientClosedRequest, recordClientClosedRequest } from './upstream-errors.js';
import {
  ambiguousPath,
  forwardedPath,
  malformedQuery,
  isUpload,
  MULTIPART_OVERHEAD_BYTES,
  routesByService,
  type Upstreams,
} from '../use-cases/route-table.js';
import type { GatewayConfig } from '../config.js';
import {
  bufferBody,
  DeferredBody,
  fromOptions,
  isUnsafe,
  limitStream,
  payloadTooLarge,
  upstreamPool,
} from './upstream.js';

export interface ProxyDeps {
  config: GatewayConfig;
  /** Keeps replicas that are not ready out of the pools. */
  upstreamHealth: UpstreamHealth;
  authFailures: AuthFailureThrottle;
  upstreams: Upstreams;
  authenticator: Authenticator;
  rateLimiter: RateLimiter | null;
  signPrincipal: FastPrincipalSigner;
  /** The cap on one credential's calls in flight (null: no cap). */
  concurrency: CredentialConcurrency | null;
  /** Idempotency-Key claims and stored answers (POST and PATCH); null: the header is ignored (bench). */
  idempotency: IdempotencyStore | null;
}

function sendError(
  reply: FastifyReply,
  status: number,
  code: Parameters<typeof errorBody>[0],
  message: string,
) {
  return reply.code(status).send(errorBody(code, message));
}

const sendAppError = (reply: FastifyReply, err: AppError) =>
  reply.headers(err.headers).code(err.statusCode).send(errorBody(err.code, err.message));

/**
 * Authentication → IP allowlist → calls in flight → rate limit → scope, before the body is read. Failed
 * authentication and refused addresses consume no quota; a scope refusal does (it is a call the
 * credential made) and carries the rate-limit headers like every other answer to a credential.
 */
function guard({ authenticator, authFailures, rateLimiter, concurrency }: ProxyDeps) {
  const tooManyFailures = (reply: FastifyReply, decision: RateDecision) => {
    reply.header('retry-after', String(decision.retryAfter));
    return sendError(
      reply,
      429,
      'RATE_LIMITED',
      `Too many failed authentications from this address; retry after ${decision.retryAfter} s`,
    );
  };
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.config.publicRoute as PublicRoute;
    // `/v1/requests/` matches `/v1/requests/:id` with an empty id: no such resource.
    if (Object.values(request.params as Record<string, string>).some((v) => v === '')) {
      return sendError(
        reply,
        404,
        'NOT_FOUND',
        `Route ${request.method} ${request.url.split('?')[0]} not found`,
      );
    }
    const blocked = authFailures.blockedFor(request.ip);
    if (blocked) return tooManyFailures(reply, blocked);
    let caller: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      caller = await authenticator.authenticate(request.headers.authorization, request.ip);
    } catch (err) {
      if (!isAppError(err)) throw err;
      if (err.statusCode === 401) {
        const refusal = await authFailures.recordFailure(request.ip);
        if (refusal) return tooManyFailures(reply, refusal);
      }
      return sendAppError(reply, err);
    }
    // Before the plan's quota: a call refused for being one too many at once costs no quota.
    const crowded = concurrency?.admit(caller.rateSubject, reply);
    if (crowded) return sendAppError(reply, crowded);
    if (rateLimiter) {
      const refused = await chargeBucket(
        rateLimiter,
        route,
        caller,
        reply,
        1,
        (limit, d) =>
          `Rate limit exceeded for the ${route.bucket} bucket: ${limit} requests per ` +
          `${d.windowSeconds} seconds; retry after ${d.retryAfter} s`,
      );
      if (refused) return refused;
    }
    if (route.scope !== 'authenticated' && !hasScope(caller.scopes, route.scope)) {
      return sendError(reply, 403, 'FORBIDDEN', `This operation requires the ${route.scope} scope`);
    }
    request.caller = caller;
    // The path rebuilt from the route, with the query as sent: what is forwarded and bound.
    const queryAt = request.url.indexOf('?');
    request.forwardUrl =
      forwardedPath(route, request.params as Record<string, string>) +
      (queryAt < 0 ? '' : request.url.slice(queryAt));
  };
}

/** How many items a bulk body names (1 when it names none: the service refuses such a body). */
function itemsOf(body: unknown): number {
  if (!Buffer.isBuffer(body)) return 1;
  try {
    const items = (JSON.parse(body.toString('utf8')) as { items?: unknown } | null)?.items;
    return Array.isArray(items) ? Math.max(1, items.length) : 1;
  } catch {
    return 1;
  }
}

type Caller = NonNullable<FastifyRequest['caller']>;

/**
 * Takes `weight` units of the route's bucket for the caller, with the rate-limit headers on the
 * reply; the reply sent (429, or 503 when the limiter is down and fails closed) when refused.
 */
async function chargeBucket(
  rateLimiter: RateLimiter,
  route: PublicRoute,
  caller: Caller,
  reply: FastifyReply,
  weight: number,
  refusal: (limit: number, decision: RateDecision) => string,
) {
  const limit = caller.limits[route.bucket];
  let decision: Awaited<ReturnType<RateLimiter['take']>>;
  try {
    decision = await rateLimiter.take(`${route.bucket}:${caller.rateSubject}`, limit, {
      plan: caller.plan,
      weight,
    });
  } catch (err) {
    if (!(err instanceof RateLimitUnavailableError)) throw err;
    return sendError(reply, 503, 'SERVICE_UNAVAILABLE', 'Rate limiting is unavailable; retry later');
  }
  if (!decision) return undefined;
  reply.headers(rateLimitHeaders(route.bucket, decision));
  if (decision.allowed) return undefined;
  reply.header('retry-after', String(decision.retryAfter));
  return sendError(reply, 429, 'RATE_LIMITED', refusal(limit, decision));
}

/**
 * A route whose cost is its `items` (a bulk job): the guard counted the call once; once its body
 * is read, the rest (one per further item) is taken all or nothing, so the job costs what its
 * changes one by one would have. Refused → 429 and nothing is forwarded.
 */
function chargeItems({ rateLimiter }: ProxyDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = request.caller;
    if (!rateLimiter || !caller) return;
    const route = request.routeOptions.config.publicRoute as PublicRoute;
    const extra = itemsOf(request.body) - 1;
    if (extra === 0) return;
    return chargeBucket(
      rateLimiter,
      route,
      caller,
      reply,
      extra,
      (limit, d) =>
        `A bulk call counts once per item: ${extra + 1} items do not fit in the ${route.bucket} bucket ` +
        `(${limit} requests per ${d.windowSeconds} seconds, ${d.remaining} left after this call); ` +
        `send fewer items or retry after ${d.retryAfter} s`,
    );
  };
}

/**
 * The principal assertion of a call about to be forwarded, once its body is read: bound to the
 * one service and the very call, body included (its digest, or a one-time id for an upload,
 * which streams on as it arrives).
 */
async function signCall(request: FastifyRequest, signPrincipal: FastPrincipalSigner): Promise<void> {
  const route = request.routeOptions.config.publicRoute as PublicRoute;
  const body = request.body;
  request.principalAssertion = await signPrincipal(request.caller!.principal, {
    clientIp: request.ip ?? null,
    userAgent: request.headers['user-agent'] ?? null,
    requestId: request.id,
    audience: route.service,
    method: request.method,
    url: request.forwardUrl,
    ...(body instanceof DeferredBody ? { streamed: true } : { body: Buffer.isBuffer(body) ? body : null }),
  });
}

/**
 * A service names what a call created by its path (`Location: /v1/requests/req_…`: it does not
 * know where the API is published); the gateway, which does, answers the absolute URL (RFC 9110
 * allows a relative one, but an absolute one is what GitHub gives and what a client can use as
 * is), from its public origin `OAUTH_ISSUER`.
 */
function absoluteLocation(publicOrigin: string) {
  const origin = publicOrigin.replace(/\/+$/, '');
  return (headers: IncomingHttpHeaders) => {
    const location = headers.location;
    if (typeof location === 'string' && location.startsWith('/')) headers.location = origin + location;
    return headers;
  };
}

/** Node's own test for a 100-continue expectation (lib/_http_server.js). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i;

/**
 * Refused before anything else (authentication included), on every route and on none:
 * - paths that parsers read differently, and malformed query encoding: 400 in the envelope;
 * - an `Expect` other than `100-continue` (RFC 9110 §10.1.1): 417 in the envelope. Node's server
 *   answers such a request itself, with a bare 417, unless someone listens for
 *   `checkExpectation`: the listener hands it to the app like any request, and this hook
 *   answers. (`100-continue` is met by Node's server; the header is not forwarded.)
 */
export function refuseUnservable(app: HttpApp): void {
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
  // Callback-style, as fastify documents for a hook that may answer: every call runs it, and an
  // async hook would cost each a promise. An answer sent here ends the chain (no `done()`).
  app.addHook('onRequest', (request, reply, done) => {
    const expect = request.headers.expect;
    if (expect !== undefined && !CONTINUE.test(expect)) {
      sendError(
        reply.header('connection', 'close'),
        417,
        'EXPECTATION_FAILED',
        `The expectation "${expect.slice(0, 64)}" cannot be met; the only expectation supported is Expect: 100-continue`,
      );
      return;
    }
    const queryAt = request.url.indexOf('?');
    const why = ambiguousPath(queryAt < 0 ? request.url : request.url.slice(0, queryAt));
    if (why) {
      sendError(reply, 400, 'VALIDATION_ERROR', `The path contains ${why}; send it in canonical form`);
      return;
    }
    if (queryAt >= 0 && malformedQuery(request.url.slice(queryAt + 1))) {
      sendError(reply, 400, 'VALIDATION_ERROR', 'The query string has malformed percent-encoding');
      return;
    }
    done();
  });
}

export async function registerPublicRoutes(app: HttpApp, deps: ProxyDeps): Promise<void> {
  const onRequest = guard(deps);
  const charge = chargeItems(deps);
  const plainHooks = fromOptions(false, absoluteLocation(deps.config.OAUTH_ISSUER));
  const idempotency = deps.idempotency && idempotencyHooks(deps.idempotency);
  const keyedHooks = { ...plainHooks, onResponse: idempotency?.onResponse } as typeof plainHooks;
  const { config } = deps;
  // The file's own limit is named (the multipart framing allowance is an implementation detail).
  const attachmentsMessage = `attachments are limited to ${humanBytes(config.ATTACHMENT_MAX_BYTES)}`;
  const jsonMessage = `JSON bodies are limited to ${humanBytes(config.JSON_BODY_LIMIT_BYTES)}`;
  for (const [service, allRoutes] of routesByService()) {
    // Calls that change something and reads have a pool each (see `upstreamPool`): two scopes.
    for (const unsafe of [false, true]) {
      const routes = allRoutes.filter((r) => isUnsafe(r.method) === unsafe);
      if (routes.length === 0) continue;
      await app.register(async (scope) => {
        // A client that hangs up mid-body fails the body's reading: its doing, not a server error.
        scope.setErrorHandler((error, request, reply) => {
          if (clientClosedRequest(request)) return recordClientClosedRequest(request, reply);
          throw error;
        });
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', (request, payload, done) => {
          const route = request.routeOptions.config.publicRoute;
          const upload = route !== undefined && isUpload(route);
          const limit = upload
            ? config.ATTACHMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES
            : config.JSON_BODY_LIMIT_BYTES;
          const tooLarge = upload ? attachmentsMessage : jsonMessage;
          const declared = Number(request.headers['content-length'] ?? 0);
          if (declared > limit) {
            done(payloadTooLarge(tooLarge), undefined);
            return;
          }
          // Uploads stream to the service, counted on the way (read only once a connection is
          // made, so a refused one can go to another replica); JSON bodies (small) are read
          // first, so they can be sent whole again.
          if (upload) done(null, new DeferredBody(limitStream(request, payload, limit, tooLarge)));
          else bufferBody(payload, limit, tooLarge, done);
        });
        await scope.register(replyFrom, {
          ...upstreamPool(config, deps.upstreams[service as OwningService], {
            writes: unsafe,
            health: deps.upstreamHealth,
            service,
          }),
          disableRequestLogging: true,
        });
        for (const route of routes) {
          const keyed = idempotency !== null && takesIdempotencyKey(route.method);
          const hooks = keyed ? keyedHooks : plainHooks;
          scope.route({
            method: route.method,
            url: route.path,
            // HEAD wherever GET is served: the same guard (it counts as a call) and the same
            // forward; the service answers HEAD itself (fastify's HEAD twin of its GET route).
            exposeHeadRoute: route.method === 'GET',
            config: { publicRoute: route },
            onRequest,
            ...(keyed ? { onSend: idempotency.onSend } : {}),
            // A stored answer replayed under its Idempotency-Key is not charged again.
            preHandler: [...(keyed ? [idempotency.preHandler] : []), ...(route.cost ? [charge] : [])],
            handler: async (request, reply) => {
              await signCall(request, deps.signPrincipal);
              return reply.from(
                request.forwardUrl,
                // A buffered body is sent as it came (never re-encoded), on every attempt.
                Buffer.isBuffer(request.body)
                  ? {
                      ...hooks,
                      body: request.body,
                      contentType: String(request.headers['content-type'] ?? 'application/octet-stream'),
                    }
                  : hooks,
              );
            },
          });
        }
      });
    }
  }
}
