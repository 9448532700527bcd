import type { IdentityRpcHandlers } from '@support-desk/platform/core';
import { requestedId } from '@support-desk/platform/core';
import { resolveApiKey } from './api-keys.js';
import type { Deps } from './deps.js';
import { groupSnapshot } from './groups.js';
import { getOAuthClientInfo } from './oauth-clients.js';
import { getSettings } from './settings.js';
import { userSnapshot } from './views.js';

/**
 * What identity answers on each subject of its RPC table (served over NATS by the composition
 * root). Requests come from other processes: ids are read tolerantly, a missing one finds nothing.
 */
export function identityRpcAnswers(deps: Deps): IdentityRpcHandlers {
  return {
    resolveApiKey: (request) => resolveApiKey(deps, request?.key),
    getUser: async (request) => {
      const user = await userSnapshot(deps, requestedId(request));
      return user ? { found: true, user } : { found: false };
    },
    getGroup: async (request) => {
      const group = await groupSnapshot(deps, requestedId(request));
      return group ? { found: true, group } : { found: false };
    },
    getOAuthClient: (request) => getOAuthClientInfo(deps, requestedId(request)),
    getSettings: () => getSettings(deps),
  };
}
