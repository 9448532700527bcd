import cors, { type FastifyCorsOptions } from '@fastify/cors';
import { OAUTH_ROUTES } from '@support-desk/contracts';
import type { HttpApp } from '@support-desk/platform/http';
import { type GatewayConfig, listFrom } from '../config.js';

/** Answer headers a browser script may read: the request id, rate limits, retry hints, replays. */
const EXPOSED_HEADERS = [
  'x-request-id',
  'retry-after',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'location',
  'allow',
  'idempotent-replayed',
];

/**
 * The endpoints another origin's script may call: the API, and the OAuth token and revocation
 * endpoints a browser app (PKCE) posts to. Never the settings console, the sign-in and consent
 * pages or anything else served for a browser on this site: those act on the session cookie, and
 * no other origin may read their answers (their CSRF tokens among them).
 */
const TOKEN_ENDPOINTS = new Set(OAUTH_ROUTES.filter((r) => r.clientAuthenticated).map((r) => r.path));
export function isCorsPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/') || TOKEN_ENDPOINTS.has(path);
}

/**
 * CORS for browser clients, with @fastify/cors (fastify's own plugin): only the origins in
 * CORS_ALLOWED_ORIGINS (none by default, then nothing is registered and browsers keep the
 * same-origin policy), and only on `isCorsPath` (a delegator picks the options per request, so a
 * preflight for any other path is not granted: the plugin leaves it to the 404). A preflight
 * (`OPTIONS`) is answered by the plugin's own route, before any public route's authentication and
 * rate limit run: it needs no credential and spends no quota. Never with credentials
 * (`CORS_ALLOW_CREDENTIALS` is refused when the configuration is loaded): API calls authenticate
 * with the Authorization header, and cookies belong to this site's own pages.
 */
export async function registerCors(app: HttpApp, config: GatewayConfig): Promise<void> {
  const origins = listFrom(config.CORS_ALLOWED_ORIGINS);
  if (origins.length === 0) return;
  const allowed: FastifyCorsOptions = {
    origin: origins.includes('*') ? '*' : origins,
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id', 'idempotency-key'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: config.CORS_MAX_AGE_SECONDS,
    strictPreflight: true,
  };
  const refused: FastifyCorsOptions = { origin: false };
  await app.register(cors, {
    delegator: (request, callback) => {
      const queryAt = request.url.indexOf('?');
      callback(
        null,
        isCorsPath(queryAt < 0 ? request.url : request.url.slice(0, queryAt)) ? allowed : refused,
      );
    },
  });
}
