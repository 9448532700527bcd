import type { HttpApp } from '@support-desk/platform/http';
import type { Keyring } from '../oauth/keys.js';
import type { Deps } from '../use-cases/deps.js';
import { groupRoutes } from './groups.js';
import { oauthTokenRoutes } from './oauth-token.js';
import { scimRoutes } from './scim.js';
import { userRoutes } from './users.js';
import { wellKnownRoutes } from './well-known.js';

/**
 * The public /v1 routes (from the contract), the OAuth token endpoint, well-known, SCIM. (The
 * browser pages, OAuth sign-in and consent and the settings console, are web/'s.)
 */
export async function registerRoutes(app: HttpApp, deps: Deps, keyring: Keyring): Promise<void> {
  userRoutes(app, deps);
  groupRoutes(app, deps);
  oauthTokenRoutes(app, deps, keyring);
  wellKnownRoutes(app, deps, keyring);
  await scimRoutes(app, deps);
}
