import { buildEvent, type EventContext, eventEntry } from '@support-desk/platform';
import type { OAuthClientDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { revokeGrant } from './grant-revocation.js';

/** An OAuth client as an administrator sees it (never its secret or the secret's hash). */
export interface OAuthClientView {
  client_id: string;
  name: string;
  redirect_uris: string[];
  public: boolean;
  plan: OAuthClientDoc['plan'];
  createdAt: string;
  revokedAt: string | null;
}

const toView = (c: OAuthClientDoc): OAuthClientView => ({
  client_id: c._id,
  name: c.name,
  redirect_uris: c.redirectUris,
  public: c.isPublic,
  plan: c.plan,
  createdAt: new Date(c.createdAt).toISOString(),
  revokedAt: c.revokedAt ? new Date(c.revokedAt).toISOString() : null,
});

export async function listOAuthClients(deps: Deps): Promise<OAuthClientView[]> {
  return (await deps.oauthClients.list()).map(toView);
}

/**
 * Revokes a client for good: it is refused at /oauth/authorize and /oauth/token from now on, and
 * every grant it holds is revoked (its refresh tokens at once, its access tokens at the gateway
 * through each grant's notice). Idempotent: a second call finds nothing left to end.
 */
export async function revokeOAuthClient(deps: Deps, ctx: EventContext, id: string) {
  const result = await deps.oauthClients.update(id, (client) => {
    if (client.revokedAt)
      return {
        write: null,
        result: { client_id: id, revokedAt: new Date(client.revokedAt).toISOString(), alreadyRevoked: true },
      };
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      id,
      ctx,
      { revokedAt: { from: null, to: now.toISOString() } },
      now,
    );
    return {
      write: { set: { revokedAt: now }, outbox: [eventEntry(deps.names, event)] },
      result: { client_id: id, revokedAt: now.toISOString(), alreadyRevoked: false },
    };
  });
  // After the client's own write: a grant made in between is refused at the token endpoint anyway.
  const grants = await deps.grants.listLiveOfClient(id);
  for (const grant of grants) await revokeGrant(deps, grant, 'client revoked');
  return { ...result, grantsRevoked: grants.length };
}
