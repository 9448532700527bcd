import type {
  GetByIdRequest,
  GetGroupReply,
  GetOAuthClientReply,
  GetUserReply,
  NatsNames,
  ResolveApiKeyReply,
  ResolveApiKeyRequest,
} from '@support-desk/contracts';
import { type NatsConnection, serveRpc } from '@support-desk/platform';
import { resolveApiKey } from '../app/apiKeys.js';
import type { Deps } from '../app/context.js';
import { getOAuthClientInfo } from '../app/oauthClients.js';
import { getSettings } from '../app/settings.js';
import { groupNames, toSnapshot } from '../app/views.js';
import type { GroupDoc, UserDoc } from '../store/index.js';

const idOf = (req: unknown) =>
  typeof (req as GetByIdRequest | null)?.id === 'string' ? (req as GetByIdRequest).id : '';

/** The request-reply endpoints identity serves for the gateway and the other services. */
export function serveIdentityRpc(nc: NatsConnection, names: NatsNames, deps: Deps) {
  const subs = [
    serveRpc<ResolveApiKeyRequest, ResolveApiKeyReply>(
      nc,
      names.rpc.resolveApiKey,
      (req) => resolveApiKey(deps, req?.key),
      deps.logger,
    ),
    serveRpc<GetByIdRequest, GetUserReply>(
      nc,
      names.rpc.getUser,
      async (req) => {
        const user = await deps.store.users.findById(idOf(req)).lean<UserDoc>();
        if (!user) return { found: false };
        return { found: true, user: toSnapshot(user, await groupNames(deps.store, user.groups)) };
      },
      deps.logger,
    ),
    serveRpc<GetByIdRequest, GetGroupReply>(
      nc,
      names.rpc.getGroup,
      async (req) => {
        const group = await deps.store.groups.findById(idOf(req)).lean<GroupDoc>();
        if (!group) return { found: false };
        return { found: true, group: { id: group._id, name: group.name, deleted: group.deletedAt !== null } };
      },
      deps.logger,
    ),
    serveRpc<GetByIdRequest, GetOAuthClientReply>(
      nc,
      names.rpc.getOAuthClient,
      (req) => getOAuthClientInfo(deps, idOf(req)),
      deps.logger,
    ),
    serveRpc<unknown, { globalAllowlist: string[] }>(
      nc,
      names.rpc.getSettings,
      () => getSettings(deps),
      deps.logger,
    ),
  ];
  return {
    async stop() {
      for (const s of subs) s.unsubscribe();
    },
  };
}
