import type { Connection } from 'mongoose';
import { apiKeyModel, oauthClientModel, settingsModel } from './credentials.js';
import { groupModel } from './groups.js';
import { grantModel, loginAttemptModel, sessionModel } from './oauth.js';
import { userModel } from './users.js';

export * from './credentials.js';
export * from './groups.js';
export * from './oauth.js';
export * from './users.js';

/** Every model of the identity database, on one connection. */
export function createStore(conn: Connection) {
  return {
    conn,
    users: userModel(conn),
    groups: groupModel(conn),
    apiKeys: apiKeyModel(conn),
    oauthClients: oauthClientModel(conn),
    settings: settingsModel(conn),
    grants: grantModel(conn),
    sessions: sessionModel(conn),
    loginAttempts: loginAttemptModel(conn),
  };
}

export type Store = ReturnType<typeof createStore>;

/** The aggregates that carry an outbox (for the relay). */
export const outboxModels = (store: Store) => [
  store.users,
  store.groups,
  store.apiKeys,
  store.oauthClients,
  store.settings,
  store.grants,
];
