import type { Connection } from 'mongoose';
import { apiKeyModel, oauthClientModel, settingsModel } from './credentials.js';
import {
  createApiKeysRepository,
  createOAuthClientsRepository,
  createSettingsRepository,
} from './credentials-repository.js';
import { createDeploymentSecretsRepository } from './deployment-secrets.js';
import { groupModel } from './groups.js';
import { createGroupsRepository, type GroupsRepositoryOptions } from './groups-repository.js';
import { identityProviderModel } from './identity-providers.js';
import { createIdentityProvidersRepository } from './identity-providers-repository.js';
import { grantModel } from './oauth.js';
import {
  createGrantsRepository,
  createLoginAttemptsRepository,
  createSessionsRepository,
} from './oauth-repository.js';
import { userModel } from './users.js';
import { createSyncLeasesRepository } from './sync-leases.js';
import { createUsersRepository } from './users-repository.js';

export type { ApiKeyDoc, OAuthClientDoc } from './credentials.js';
export type { GroupDoc } from './groups.js';
export { groupNameKey } from './groups.js';
export type {
  GroupRoleRule,
  IdentityProviderDoc,
  IdentityProviderKind,
  SyncOutcome,
  SyncRunSummary,
} from './identity-providers.js';
export type { GrantDoc } from './oauth.js';
export type { FailureCount } from './oauth-repository.js';
export type { UserDoc } from './users.js';
export { emailKey, type UserBrief, type UserListFilter } from './users-repository.js';

/** One repository per aggregate of the identity database, on one connection. */
export function createRepositories(
  conn: Connection,
  options: GroupsRepositoryOptions & { listTotalTtlMs?: number },
) {
  return {
    users: createUsersRepository(conn, { totalsTtlMs: options.listTotalTtlMs ?? 0 }),
    groups: createGroupsRepository(conn, options),
    apiKeys: createApiKeysRepository(conn),
    oauthClients: createOAuthClientsRepository(conn),
    settings: createSettingsRepository(conn),
    grants: createGrantsRepository(conn),
    sessions: createSessionsRepository(conn),
    loginAttempts: createLoginAttemptsRepository(conn),
    identityProviders: createIdentityProvidersRepository(conn),
    syncLeases: createSyncLeasesRepository(conn),
    deploymentSecrets: createDeploymentSecretsRepository(conn),
  };
}

export type Repositories = ReturnType<typeof createRepositories>;

/** The aggregates that carry an outbox (for the relay). */
export const outboxModels = (conn: Connection) => [
  userModel(conn),
  groupModel(conn),
  apiKeyModel(conn),
  oauthClientModel(conn),
  settingsModel(conn),
  grantModel(conn),
  identityProviderModel(conn),
];
