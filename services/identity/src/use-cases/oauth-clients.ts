import { type GetOAuthClientReply, newId, type Plan, type RateLimits } from '@support-desk/contracts';
import { buildEvent, type EventContext, eventEntry, validationError } from '@support-desk/platform/core';
import type { OAuthClientDoc } from '../store/index.js';
import { resolveLimits } from './api-keys.js';
import type { Deps } from './deps.js';
import { randomSecret, safeEqual, sha256 } from './secrets.js';

export interface CreateOAuthClientInput {
  name: string;
  redirectUris: string[];
  isPublic?: boolean;
  plan?: Plan;
  limits?: Partial<RateLimits>;
}

/**
 * Redirect URIs are absolute, without fragment, and https except for loopback hosts (RFC 8252
 * native apps and local development). They are matched exactly at /oauth/authorize.
 */
function checkRedirectUri(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('redirect-uri', `"${raw}" is not an absolute URI`);
  }
  if (url.hash || raw.includes('#')) throw validationError('redirect-uri', 'must not contain a fragment');
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw validationError('redirect-uri', 'must be https (http only for loopback hosts)');
  }
  if (raw.length > 2000) throw validationError('redirect-uri', 'is too long');
  return raw;
}

export async function createOAuthClient(deps: Deps, ctx: EventContext, input: CreateOAuthClientInput) {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw validationError('name', 'must be 1..100 characters');
  if (input.redirectUris.length === 0) throw validationError('redirect-uri', 'at least one is required');
  const redirectUris = [...new Set(input.redirectUris.map(checkRedirectUri))];
  const plan = input.plan ?? 'standard';
  const limits = resolveLimits(plan, input.limits, 'limits');
  const isPublic = input.isPublic ?? false;
  const now = deps.clock();
  const id = newId('oauthClient', now.getTime());
  const secret = isPublic ? null : randomSecret(32);
  const event = buildEvent(
    'system.config_changed',
    id,
    ctx,
    { oauthClient: { from: null, to: { client_id: id, name, redirectUris, public: isPublic, plan } } },
    now,
  );
  await deps.oauthClients.insert(
    {
      _id: id,
      name,
      redirectUris,
      isPublic,
      secretHash: secret ? sha256(secret) : null,
      plan,
      limits,
      createdAt: now,
      createdBy: ctx.actor.id,
    },
    [eventEntry(deps.names, event)],
  );
  return {
    client_id: id,
    ...(secret ? { client_secret: secret } : {}),
    name,
    redirect_uris: redirectUris,
    public: isPublic,
    plan,
    limits,
    createdAt: now.toISOString(),
  };
}

/** The client, unless unknown or revoked (a revoked client is refused everywhere, as unknown). */
export async function findClient(deps: Deps, clientId: unknown): Promise<OAuthClientDoc | null> {
  if (typeof clientId !== 'string' || clientId.length > 64) return null;
  const client = await deps.oauthClients.findWithSecretHash(clientId);
  return client && !client.revokedAt ? client : null;
}

/** Constant-time check of a confidential client's secret. */
export function clientSecretMatches(client: OAuthClientDoc, secret: string | undefined): boolean {
  const ok = safeEqual(sha256(secret ?? ''), client.secretHash ?? sha256('\0'));
  return ok && !!client.secretHash && secret !== undefined;
}

export async function getOAuthClientInfo(deps: Deps, clientId: string): Promise<GetOAuthClientReply> {
  const client = await findClient(deps, clientId);
  if (!client) return { found: false };
  return {
    found: true,
    client: {
      clientId: client._id,
      name: client.name,
      plan: client.plan,
      limits: client.plan === 'enterprise' ? (client.limits ?? null) : null,
    },
  };
}
