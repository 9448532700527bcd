import { type Plan, PLANS } from '@support-desk/contracts';
import type { HttpApp, WebhooksAdminClient } from '@support-desk/platform';
import type { FastifyInstance } from 'fastify';
import { apiKeysPage, type KeyFormValues } from '../console/api-keys-page.js';
import { confirmBody, consolePage, type Frame } from '../console/frame.js';
import { allowlistPage, oauthClientsPage } from '../console/settings-pages.js';
import { acceptForms, type FormBody } from '../oauth/forms.js';
import { listApiKeys, revokeApiKey } from '../use-cases/api-keys.js';
import { createApiKeyInConsole } from '../use-cases/console-keys.js';
import type { Deps, EventContext } from '../use-cases/deps.js';
import { allowlistAdmits, normaliseAllowlistEntry, parseAllowlist } from '../use-cases/ip-allowlist.js';
import { listOAuthClients, revokeOAuthClient } from '../use-cases/oauth-client-admin.js';
import { createOAuthClient } from '../use-cases/oauth-clients.js';
import { getSettings, setGlobalAllowlist } from '../use-cases/settings.js';
import {
  type ConsoleKit,
  consoleKit,
  consoleSessionRoutes,
  field,
  fields,
  query,
} from './console-session.js';
import { webhookRoutes } from './console-webhooks.js';

const open = { config: { public: true } };

const optionalInt = (raw: string) => (raw === '' ? undefined : Number(raw));
const listOf = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);

/**
 * The settings console (issue 19): server-rendered pages through which an administrator manages
 * API keys, the global IP allowlist and OAuth clients with the same use cases as deskctl (so the
 * same checks and the same events, with source `console` and the request's address), and webhook
 * subscriptions through the webhooks service's admin RPC (`webhooks`, the client deskctl uses). Served
 * without a principal, like the OAuth pages; the gateway forwards `CONSOLE_ROUTES` here.
 */
export function consoleRoutes(app: HttpApp, deps: Deps, webhooks: WebhooksAdminClient): void {
  const kit = consoleKit(deps);
  app.register(async (pages) => {
    acceptForms(pages);
    consoleSessionRoutes(pages, deps, kit);
    apiKeyRoutes(pages, deps, kit);
    allowlistRoutes(pages, deps, kit);
    oauthClientRoutes(pages, deps, kit);
    webhookRoutes(pages, kit, webhooks);
  });
}

function apiKeyRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  revocationRoutes(pages, kit, {
    section: '/settings/api-keys',
    what: 'API key',
    async find(id) {
      const key = (await listApiKeys(deps)).find((k) => k.id === id && !k.revokedAt);
      return key && `Revoke the API key “${key.name}” of ${key.owner.email}?`;
    },
    consequence: 'Every call made with it is refused from now on. This cannot be undone.',
    revoke: (ctx, id) => revokeApiKey(deps, ctx, id),
    listWithError: async (frame, error) => apiKeysPage({ frame, keys: await listApiKeys(deps), error }),
  });

  pages.get('/settings/api-keys', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const revoked = query(request.query, 'revoked');
    const notice = revoked ? `API key ${revoked} is revoked: calls with it are refused.` : undefined;
    return kit.send(reply, 200, apiKeysPage({ frame: admin.frame, keys: await listApiKeys(deps), notice }));
  });

  pages.post('/settings/api-keys', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const body = (request.body ?? {}) as FormBody;
    const form: KeyFormValues = {
      name: field(body, 'name'),
      owner: field(body, 'owner'),
      plan: field(body, 'plan'),
      expires_days: field(body, 'expires_days'),
      allowlist: field(body, 'allowlist'),
      scopes: fields(body, 'scopes'),
      rate_limit: field(body, 'rate_limit'),
      events_rate_limit: field(body, 'events_rate_limit'),
    };
    const again = (status: number, error: string) =>
      listApiKeys(deps).then((keys) =>
        kit.send(reply, status, apiKeysPage({ frame: admin.frame, keys, error, form })),
      );
    const days = optionalInt(form.expires_days!);
    if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650))
      return again(400, 'expires: enter a whole number of days from 1 to 3650, or leave it empty');
    const plan = (PLANS as readonly string[]).includes(form.plan!) ? (form.plan as Plan) : undefined;
    if (form.plan && !plan) return again(400, `plan: must be one of ${PLANS.join(', ')}`);
    const general = optionalInt(form.rate_limit!);
    const events = optionalInt(form.events_rate_limit!);
    try {
      const key = await createApiKeyInConsole(
        deps,
        kit.context(request, admin),
        { user: admin.user, password: field(body, 'password') || undefined, address: kit.meta(request).ip },
        {
          ownerEmail: form.owner!,
          name: form.name!,
          scopes: form.scopes!,
          ...(plan && { plan }),
          ...((general !== undefined || events !== undefined) && { limits: { general, events } }),
          allowlist: listOf(form.allowlist!),
          ...(days && { expiresInSeconds: days * 86_400 }),
        },
      );
      const keys = await listApiKeys(deps);
      const created = { id: key.id, key: key.key, name: key.name };
      return kit.send(reply, 201, apiKeysPage({ frame: admin.frame, keys, created }));
    } catch (err) {
      const { status, message } = kit.failure(err);
      return again(status, message);
    }
  });
}

function allowlistRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  pages.get('/settings/ip-allowlist', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const { globalAllowlist: list } = await getSettings(deps);
    const notice = query(request.query, 'saved') ? 'The allowlist is saved.' : undefined;
    const page = allowlistPage({ frame: admin.frame, list, address: request.clientAddress, notice });
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
    const page = (status: number, extra: Partial<Parameters<typeof allowlistPage>[0]>) =>
      kit.send(reply, status, allowlistPage({ frame: admin.frame, list, address, ...extra }));
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

function oauthClientRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  revocationRoutes(pages, kit, {
    section: '/settings/oauth-clients',
    what: 'OAuth client',
    async find(id) {
      const client = (await listOAuthClients(deps)).find((c) => c.client_id === id && !c.revokedAt);
      return client && `Revoke the OAuth client “${client.name}”?`;
    },
    consequence:
      'It can no longer sign users in, and every access and refresh token issued to it stops working. This cannot be undone.',
    revoke: (ctx, id) => revokeOAuthClient(deps, ctx, id),
    listWithError: async (frame, error) =>
      oauthClientsPage({ frame, clients: await listOAuthClients(deps), error }),
  });

  pages.get('/settings/oauth-clients', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const revoked = query(request.query, 'revoked');
    const notice = revoked ? `OAuth client ${revoked} is revoked, with every token issued to it.` : undefined;
    const clients = await listOAuthClients(deps);
    return kit.send(reply, 200, oauthClientsPage({ frame: admin.frame, clients, notice }));
  });

  pages.post('/settings/oauth-clients', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const body = (request.body ?? {}) as FormBody;
    const form = {
      name: field(body, 'name'),
      redirect_uris: field(body, 'redirect_uris'),
      type: field(body, 'type'),
      plan: field(body, 'plan'),
    };
    const plan = (PLANS as readonly string[]).includes(form.plan) ? (form.plan as Plan) : undefined;
    try {
      const client = await createOAuthClient(deps, kit.context(request, admin), {
        name: form.name,
        redirectUris: listOf(form.redirect_uris),
        isPublic: form.type === 'public',
        ...(plan && { plan }),
      });
      const clients = await listOAuthClients(deps);
      return kit.send(reply, 201, oauthClientsPage({ frame: admin.frame, clients, created: client }));
    } catch (err) {
      const { status, message } = kit.failure(err);
      const clients = await listOAuthClients(deps);
      return kit.send(reply, status, oauthClientsPage({ frame: admin.frame, clients, error: message, form }));
    }
  });
}

/**
 * `<section>/revoke`: GET shows what revoking the item (`?id=`) will do, with a danger button;
 * its POSTed form revokes through the use case and returns to the list with a notice.
 */
function revocationRoutes(
  pages: FastifyInstance,
  kit: ConsoleKit,
  spec: {
    section: '/settings/api-keys' | '/settings/oauth-clients';
    what: string;
    /** The confirmation question for an active item, or nothing when there is none with that id. */
    find: (id: string | undefined) => Promise<string | undefined>;
    consequence: string;
    revoke: (ctx: EventContext, id: string) => Promise<unknown>;
    listWithError: (frame: Frame, error: string) => Promise<string>;
  },
): void {
  const path = `${spec.section}/revoke`;
  pages.get(path, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = query(request.query, 'id');
    const question = await spec.find(id);
    const body = question
      ? confirmBody({
          frame: admin.frame,
          action: path,
          id: id!,
          question,
          consequence: spec.consequence,
          button: `Revoke ${spec.what.split(' ').pop()}`,
          back: spec.section,
        })
      : `<p class="error" role="alert">No active ${spec.what} with that id.</p><p><a href="${spec.section}">Back to the list</a></p>`;
    const page = consolePage(`Revoke ${spec.what}`, spec.section, admin.frame, body);
    return kit.send(reply, question ? 200 : 404, page);
  });

  pages.post(path, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = field((request.body ?? {}) as FormBody, 'id');
    try {
      await spec.revoke(kit.context(request, admin), id);
    } catch (err) {
      const { status, message } = kit.failure(err);
      return kit.send(reply, status, await spec.listWithError(admin.frame, message));
    }
    return reply.redirect(`${spec.section}?revoked=${encodeURIComponent(id)}`, 303);
  });
}
