import type { RequestsAdminClient, WebhooksAdminClient } from '@support-desk/platform/clients';
import type { HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import { formsKey } from '../use-cases/login.js';
import { consoleRoutes } from './routes/console.js';
import { formExpired } from './routes/console-session.js';
import { oauthPageRoutes } from './routes/oauth-pages.js';
import { registerBrowserForms } from './session.js';

/**
 * identity's browser side, in one place: the OAuth sign-in and consent pages and the settings
 * console, which share the session cookie, the forms' CSRF protection, the layout and the assets.
 * Only the composition root registers it; the OAuth token endpoint and keys stay in oauth/.
 */
export function registerBrowserPages(
  app: HttpApp,
  deps: Deps,
  webhooks: WebhooksAdminClient,
  requests: RequestsAdminClient,
): void {
  app.register(async (browser) => {
    const forms = await registerBrowserForms(browser, {
      secure: deps.config.OAUTH_ISSUER.startsWith('https://'),
      hmacKey: await formsKey(deps),
      refused: formExpired,
    });
    oauthPageRoutes(browser, deps, forms);
    consoleRoutes(browser, deps, forms, webhooks, requests);
  });
}
