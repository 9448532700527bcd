import type { RequestsAdminClient, WebhooksAdminClient } from '@support-desk/platform/clients';
import type { FastifyInstance } from 'fastify';
import { pageQuery } from '../pages/lists.js';
import { allowlistPage } from '../pages/settings.js';
import type { BrowserForms } from '../session.js';
import { type FormBody, field, query } from '../forms.js';
import type { Deps } from '../../use-cases/deps.js';
import { allowlistAdmits, normaliseAllowlistEntry, parseAllowlist } from '../../use-cases/ip-allowlist.js';
import { getSettings, setGlobalAllowlist } from '../../use-cases/settings.js';
import { apiKeyRoutes, oauthClientRoutes } from './console-credentials.js';
import { type ConsoleKit, consoleKit, consoleSessionRoutes, formExpired } from './console-session.js';
import { userRoutes } from './console-users.js';
import { slaPolicyRoutes } from './console-sla-policies.js';
import { trashRoutes } from './console-trash.js';
import { webhookRoutes } from './console-webhooks.js';

const open = { config: { public: true } };

/**
 * The settings console (issue 19): server-rendered pages through which an administrator manages
 * API keys, the global IP allowlist, OAuth clients and which identity provider manages a user
 * (`console-users.ts`) with the same use cases as deskctl (so the
 * same checks and the same events, with source `console` and the request's address), and webhook
 * subscriptions through the webhooks service's admin RPC (`webhooks`, the client deskctl uses), SLA
 * policies and the trash through the requests service's (`requests`). Served
 * without a principal, like the OAuth pages; the gateway forwards `CONSOLE_ROUTES` here.
 */
export function consoleRoutes(
  app: FastifyInstance,
  deps: Deps,
  forms: BrowserForms,
  webhooks: WebhooksAdminClient,
  requests: RequestsAdminClient,
): void {
  const kit = consoleKit(deps, forms);
  app.register(async (pages) => {
    // A console form without its CSRF token (checked before any handler): nothing is changed.
    pages.addHook('onRoute', (route) => {
      route.config = { csrfRefused: formExpired, ...route.config } as typeof route.config;
    });
    consoleSessionRoutes(pages, deps, kit);
    apiKeyRoutes(pages, deps, kit);
    allowlistRoutes(pages, deps, kit);
    oauthClientRoutes(pages, deps, kit);
    webhookRoutes(pages, kit, webhooks);
    slaPolicyRoutes(pages, kit, requests);
    trashRoutes(pages, kit, requests);
    userRoutes(pages, deps, kit);
  });
}

function allowlistRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  pages.get('/settings/ip-allowlist', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const { globalAllowlist: list } = await getSettings(deps);
    const notice = query(request.query, 'saved') ? 'The allowlist is saved.' : undefined;
    const at = {
      path: '/settings/ip-allowlist',
      filters: {},
      ...pageQuery(request.method === 'GET' ? request.query : {}),
    };
    const page = allowlistPage({ frame: admin.frame, list, at, address: request.clientAddress, notice });
    return kit.send(reply, 200, page);
  });

  /**
   * One entry added or removed. A list that would no longer admit this very address is saved
   * only once confirmed (`confirm=lockout`): the page explains what it would do first.
   */
  pages.post('/settings/ip-allowlist', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const body = (request.body ?? {}) as FormBody;
    const action = field(body, 'action');
    const entry = field(body, 'entry');
    const { globalAllowlist: list } = await getSettings(deps);
    const address = request.clientAddress;
    const at = {
      path: '/settings/ip-allowlist',
      filters: {},
      ...pageQuery(request.method === 'GET' ? request.query : {}),
    };
    const page = (status: number, extra: Partial<Parameters<typeof allowlistPage>[0]>) =>
      kit.send(reply, status, allowlistPage({ frame: admin.frame, list, at, address, ...extra }));
    let result: string[];
    if (action === 'add') {
      const normalised = normaliseAllowlistEntry(entry);
      if (!normalised)
        return page(400, {
          entry,
          error: `“${entry}” is not an IPv4/IPv6 address or CIDR (e.g. 203.0.113.0/24).`,
        });
      try {
        result = parseAllowlist([...list, normalised]);
      } catch (err) {
        return page(400, { entry, error: (err as Error).message });
      }
    } else if (action === 'remove') {
      result = list.filter((e) => e !== entry);
    } else {
      return page(400, { error: 'Choose to add or remove an entry.' });
    }
    if (result.length > 0 && !allowlistAdmits(result, address) && field(body, 'confirm') !== 'lockout') {
      return page(409, { pending: { action, entry, result } });
    }
    await setGlobalAllowlist(deps, kit.context(request, admin), result);
    return reply.redirect('/settings/ip-allowlist?saved=1', 303);
  });
}
