/*
 * `@support-desk/identity/admin`: what an admin tool (deskctl, tools/deskctl) may use of identity.
 * The use cases an operator runs, over an admin session (the store and NATS, as the service has
 * them), with an admin's event context; nothing of the service's HTTP side (no routes, console,
 * SCIM or OAuth pages). Services never import each other; a tool imports only this entry
 * (DEVELOPERS.md, "Dependency rules"; the lint holds it).
 */
export { type AdminNats, type AdminSession, openAdminSession } from './session.js';
export type { GroupRoleRule, IdentityProviderKind } from '../store/index.js';
export { CLI_ACTOR, cliContext, type Deps, type EventContext } from '../use-cases/deps.js';
export { type ApiKeyView, createApiKey, listApiKeys, revokeApiKey } from '../use-cases/api-keys.js';
export { bootstrap } from '../use-cases/bootstrap.js';
export { addMember, createGroup, getGroup, listGroups, removeMember } from '../use-cases/groups.js';
export {
  createIdentityProvider,
  deleteIdentityProvider,
  findIdentityProvider,
  IDENTITY_PROVIDER_KINDS,
  type IdentityProviderView,
  listIdentityProviders,
  rotateScimToken,
  toView,
  updateIdentityProvider,
} from '../use-cases/identity-providers.js';
export { firstUserProblem } from '../use-cases/input-checks.js';
export { parseAllowlist } from '../use-cases/ip-allowlist.js';
export { runLdapSync } from '../use-cases/ldap-sync.js';
export type { SyncRunView } from '../use-cases/ldap-sync-view.js';
export {
  listOAuthClients,
  type OAuthClientView,
  revokeOAuthClient,
} from '../use-cases/oauth-client-admin.js';
export { createOAuthClient } from '../use-cases/oauth-clients.js';
export { linkUserToProvider } from '../use-cases/provider-links.js';
export { scimBaseUrl } from '../use-cases/scim/calls.js';
export { getSettings, setGlobalAllowlist } from '../use-cases/settings.js';
export { findUserByEmail } from '../use-cases/user-lookups.js';
export {
  createUser,
  deactivateUser,
  getUser,
  listUsers,
  setPassword,
  updateUser,
} from '../use-cases/users.js';
export { countOf, pageTotal } from '../use-cases/views.js';
export { rotateDevSigningKey } from '../oauth/keys.js';
