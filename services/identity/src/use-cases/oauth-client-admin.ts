import type { Plan, RateLimits } from '@support-desk/contracts';
import { buildEvent, type EventContext, eventEntry } from '@support-desk/platform/core';
import type { OAuthClientDoc } from '../store/index.js';
import type { CredentialStatus } from './api-keys.js';
import type { Deps } from './deps.js';
import { revokeGrantIf } from './grant-revocation.js';

/** An OAuth client as an administrator sees it (never its secret or the secret's hash). */
export interface OAuthClientView {
  client_id: string;
  name: string;
  redirect_uris: string[];
  public: boolean;
  plan: Plan;
  limits: RateLimits | null;
  createdAt: string;
  revokedAt: string | null;
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

const toView = (c: OAuthClientDoc): OAuthClientView => ({
  client_id: c._id,
  name: c.name,
  redirect_uris: c.redirectUris,
  public: c.isPublic,
  plan: c.plan,
  limits: c.limits ?? null,
  createdAt: iso(c.createdAt)!,
  revokedAt: iso(c.revokedAt),
});

/**
 * A page of the registered clients, newest first, with how many match: the active ones, the
 * revoked ones or all (default). Shared by console and deskctl.
 */
export async function listOAuthClients(
  deps: Deps,
  query: { status?: CredentialStatus; page: number; limit: number },
): Promise<{ clients: OAuthClientView[]; total: number }> {
  const status = query.status ?? 'all';
  const matching = (await deps.oauthClients.list()).filter(
    (c) => status === 'all' || !c.revokedAt === (status === 'active'),
  );
  const start = (query.page - 1) * query.limit;
  return { clients: matching.slice(start, start + query.limit).map(toView), total: matching.length };
}

/** One client as a list shows it, or null. */
export async function findOAuthClient(deps: Deps, clientId: string): Promise<OAuthClientView | null> {
  const client = await deps.oauthClients.findWithSecretHash(clientId);
  return client ? toView(client) : null;
}

/**
 * Revokes a client: it can no longer start an authorization, exchange a code or refresh
 * (`findClient` treats it as unknown, and the gateway's look-up answers "not found" once its
 * short cache lapses), and every live grant it holds is revoked with its notice, so the gateway
 * refuses the access tokens issued to it at once. Idempotent: a second revocation changes nothing.
 */
export async function revokeOAuthClient(deps: Deps, ctx: EventContext, clientId: string) {
  const outcome = await deps.oauthClients.update(clientId, (client) => {
    if (client.revokedAt)
      return { write: null, result: { revokedAt: iso(client.revokedAt)!, alreadyRevoked: true } };
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      clientId,
      ctx,
      { revokedAt: { from: null, to: now.toISOString() } },
      now,
    );
    return {
      write: { set: { revokedAt: now }, outbox: [eventEntry(deps.names, event)] },
      result: { revokedAt: now.toISOString(), alreadyRevoked: false },
    };
  });
  // Also on a repeated call: grants a crash left live after the first one are ended now.
  const grants = await deps.grants.listLiveOfClient(clientId);
  for (const grant of grants) {
    await revokeGrantIf(deps, grant._id, 'client_revoked', (g) => g.clientId === clientId);
  }
  return { client_id: clientId, ...outcome, grantsRevoked: grants.length };
}
