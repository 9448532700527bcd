import type { HttpApp } from '@support-desk/platform/http';
import type { RequestsAdminClient, WebhooksAdminClient } from '@support-desk/platform/clients';
import { registerBrowserForms } from '../oauth/browser-forms.js';
import type { Keyring } from '../oauth/keys.js';
import type { Deps } from '../use-cases/deps.js';
import { formsKey } from '../use-cases/login.js';
import { consoleRoutes } from './console.js';
import { formExpired } from './console-session.js';
import { groupRoutes } from './groups.js';
import { oauthPageRoutes } from './oauth-pages.js';
import { oauthTokenRoutes } from './oauth-token.js';
import { scimRoutes } from './scim.js';
import { userRoutes } from './users.js';
import { wellKnownRoutes } from './well-known.js';

/**
 * The public /v1 routes (from the contract), the OAuth pages and token endpoint, the settings
 * console, well-known, SCIM.
 */
export async function registerRoutes(
  app: HttpApp,
  deps: Deps,
  keyring: Keyring,
  webhooks: WebhooksAdminClient,
  requests: RequestsAdminClient,
): Promise<void> {
  userRoutes(app, deps);
  groupRoutes(app, deps);
  // The pages a browser signs in on share the session cookie and the forms' CSRF protection.
  app.register(async (browser) => {
    const forms = await registerBrowserForms(browser, {
      secure: deps.config.OAUTH_ISSUER.startsWith('https://'),
      hmacKey: await formsKey(deps),
      refused: formExpired,
    });
    oauthPageRoutes(browser, deps, forms);
    consoleRoutes(browser, deps, forms, webhooks, requests);
  });
  oauthTokenRoutes(app, deps, keyring);
  wellKnownRoutes(app, deps, keyring);
  await scimRoutes(app, deps);
}
