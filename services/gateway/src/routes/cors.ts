import cors from '@fastify/cors';
import type { HttpApp } from '@support-desk/platform';
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
 * CORS for browser clients, with @fastify/cors (fastify's own plugin): only the origins in
 * CORS_ALLOWED_ORIGINS (none by default, then nothing is registered and browsers keep the
 * same-origin policy). A preflight (`OPTIONS`) is answered by the plugin's own route, before any
 * public route's authentication and rate limit run: it needs no credential and spends no quota.
 * Credentials (cookies) are allowed only with CORS_ALLOW_CREDENTIALS and never with `*`
 * (refused when the configuration is loaded); API calls authenticate with the Authorization
 * header, which needs none.
 */
export async function registerCors(app: HttpApp, config: GatewayConfig): Promise<void> {
  const origins = listFrom(config.CORS_ALLOWED_ORIGINS);
  if (origins.length === 0) return;
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    credentials: config.CORS_ALLOW_CREDENTIALS,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id', 'idempotency-key'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: config.CORS_MAX_AGE_SECONDS,
    strictPreflight: true,
  });
}
