import httpProxy from '@fastify/http-proxy';
import replyFrom from '@fastify/reply-from';
import { errorBody, type HttpApp } from '@support-desk/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  type RateDecision,
  type RateLimiter,
  RateLimitUnavailableError,
  rateLimitHeaders,
} from '../store/rate-limiter.js';
import type { GatewayConfig } from '../config.js';
import { fromOptions, poolOptions } from './upstream.js';

export interface OAuthProxyDeps {
  config: GatewayConfig;
  identityUrl: string;
  rateLimiter: RateLimiter | null;
}

const TOKEN_BODY_LIMIT = 64 * 1024;

/** client_id from HTTP Basic client authentication, the query, or a form/JSON body. */
export function oauthClientId(request: FastifyRequest, rawBody?: string): string | null {
  const auth = request.headers.authorization;
  if (auth?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    let id = '';
    try {
      id = decodeURIComponent(decoded.split(':')[0] ?? '');
    } catch {
      // Malformed percent-encoding: no client is named (identity answers invalid_client).
    }
    if (id) return id;
  }
  const query = request.query as Record<string, unknown> | undefined;
  if (typeof query?.client_id === 'string' && query.client_id) return query.client_id;
  if (rawBody) {
    const type = String(request.headers['content-type'] ?? '');
    if (type.includes('json')) {
      try {
        const id = (JSON.parse(rawBody) as { client_id?: unknown }).client_id;
        if (typeof id === 'string' && id) return id;
      } catch {
        return null;
      }
    } else {
      const id = new URLSearchParams(rawBody).get('client_id');
      if (id) return id;
    }
  }
  return null;
}

/**
 * The token endpoint and the login/consent form POSTs are unauthenticated, so they get their own
 * limits (credential stuffing, code guessing): per client IP and per OAuth client.
 */
async function limitAuthCall(
  deps: OAuthProxyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  clientId: string | null,
): Promise<boolean> {
  const limiter = deps.rateLimiter;
  if (!limiter) return true;
  const checks: [string, number][] = [[`auth:ip:${request.ip}`, deps.config.OAUTH_LIMIT_PER_IP]];
  if (clientId) checks.push([`auth:client:${clientId}`, deps.config.OAUTH_TOKEN_LIMIT_PER_CLIENT]);
  const decisions: RateDecision[] = [];
  try {
    for (const [key, limit] of checks) {
      const d = await limiter.take(key, limit);
      if (d) decisions.push(d);
    }
  } catch (err) {
    if (!(err instanceof RateLimitUnavailableError)) throw err;
    reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', 'Rate limiting is unavailable; retry later'));
    return false;
  }
  // Report the binding limit: a refusal (latest retry) first, else the one with least room.
  const refused = decisions.filter((d) => !d.allowed).sort((a, b) => b.retryAfter - a.retryAfter);
  const tightest = refused[0] ?? [...decisions].sort((a, b) => a.remaining - b.remaining)[0];
  if (!tightest) return true;
  reply.headers(rateLimitHeaders('auth', tightest));
  if (tightest.allowed) return true;
  reply.header('retry-after', String(tightest.retryAfter));
  reply
    .code(429)
    .send(
      errorBody(
        'RATE_LIMITED',
        `Rate limit exceeded for the auth bucket; retry after ${tightest.retryAfter} s`,
      ),
    );
  return false;
}

// OAuth calls keep their Authorization header (client authentication for the token endpoint).
const replyOptions = fromOptions(true);

/** `/oauth/*` and `/.well-known/*` → identity, without API authentication, paths unchanged. */
export async function registerOAuthProxy(app: HttpApp, deps: OAuthProxyDeps): Promise<void> {
  const { config, identityUrl } = deps;

  // The token endpoint's body is small: buffered so the client id can be counted, then forwarded.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: TOKEN_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    await scope.register(replyFrom, {
      base: identityUrl,
      undici: poolOptions(config),
      disableRequestLogging: true,
    });
    scope.post('/oauth/token', async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      if (!(await limitAuthCall(deps, request, reply, oauthClientId(request, raw)))) return reply;
      return reply.from('/oauth/token', {
        ...replyOptions,
        body: raw,
        contentType: String(request.headers['content-type'] ?? 'application/x-www-form-urlencoded'),
      });
    });
  });

  for (const prefix of ['/oauth', '/.well-known']) {
    await app.register(httpProxy, {
      upstream: identityUrl,
      prefix,
      rewritePrefix: prefix,
      undici: poolOptions(config),
      disableRequestLogging: true,
      preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
        // Login and consent form posts: counted per IP and per client (client_id in the query).
        if (
          request.method === 'POST' &&
          !(await limitAuthCall(deps, request, reply, oauthClientId(request)))
        ) {
          return reply;
        }
      },
      replyOptions: replyOptions as never,
    });
  }
}
