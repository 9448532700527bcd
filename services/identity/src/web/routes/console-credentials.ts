import { type Plan, PLANS } from '@support-desk/contracts';
import { isAppError } from '@support-desk/platform/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import { apiKeysPage, type ApiKeysPageOptions, type KeyFormValues } from '../pages/api-keys.js';
import { ConfirmBody, consolePage, type Frame, Missing } from '../pages/frame.js';
import { pageQuery } from '../pages/lists.js';
import { type OAuthClientsPageOptions, oauthClientsPage } from '../pages/settings.js';
import { type FormBody, field, fields, query } from '../forms.js';
import {
  CREDENTIAL_STATUSES,
  type CredentialStatus,
  findApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../use-cases/api-keys.js';
import { createApiKeyInConsole } from '../../use-cases/console-keys.js';
import type { Deps, EventContext } from '../../use-cases/deps.js';
import { findOAuthClient, listOAuthClients, revokeOAuthClient } from '../../use-cases/oauth-client-admin.js';
import { createOAuthClient } from '../../use-cases/oauth-clients.js';
import { type ConsoleKit } from './console-session.js';

/**
 * The console's credential pages: API keys and OAuth clients, each a paged, filtered list with
 * its create form and a revocation through a confirmation page, on deskctl's use cases.
 */

const open = { config: { public: true } };

const optionalInt = (raw: string) => (raw === '' ? undefined : Number(raw));
const listOf = (raw: string) => raw.split(/[\s,]+/).filter(Boolean);

/** A list's status filter: one of the credential statuses, else the default (those that work). */
const statusFilter = (q: unknown) => {
  const v = query(q, 'status');
  return (CREDENTIAL_STATUSES as readonly string[]).includes(v ?? '') ? (v as CredentialStatus) : 'active';
};

/** A filter's value in a list's address: left out when it is the default. */
const nonDefault = (status: CredentialStatus) => (status === 'active' ? undefined : status);

/** The list's address from a GET's query (a POST answers with the list's first page). */
const listAt = (
  request: FastifyRequest,
  path: string,
  filters: (q: unknown) => Record<string, string | undefined>,
) => {
  const q = request.method === 'GET' ? request.query : {};
  return { path, filters: filters(q), ...pageQuery(q) };
};

export function apiKeyRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  /** The keys page: the page of keys its address asks for (owner, status), with what else it says. */
  async function keysPage(
    request: FastifyRequest,
    frame: Frame,
    extra: Omit<ApiKeysPageOptions, 'frame' | 'keys' | 'total' | 'at'> = {},
  ) {
    const at = listAt(request, '/settings/api-keys', (q) => ({
      owner: query(q, 'owner')?.trim() || undefined,
      status: nonDefault(statusFilter(q)),
    }));
    const status = statusFilter({ status: at.filters.status });
    try {
      const { keys, total } = await listApiKeys(deps, {
        ownerEmail: at.filters.owner,
        status,
        page: at.page,
        limit: at.limit,
      });
      return apiKeysPage({ frame, keys, total, at, ...extra });
    } catch (err) {
      if (!isAppError(err) || err.code !== 'NOT_FOUND') throw err;
      const error = extra.error ?? `No user has the email ${at.filters.owner}.`;
      return apiKeysPage({ frame, keys: [], total: 0, at, ...extra, error });
    }
  }

  revocationRoutes(pages, kit, {
    section: '/settings/api-keys',
    what: 'API key',
    async find(id) {
      const key = id ? await findApiKey(deps, id) : null;
      return key && !key.revokedAt ? `Revoke the API key “${key.name}” of ${key.owner.email}?` : undefined;
    },
    consequence: 'Every call made with it is refused from now on. This cannot be undone.',
    revoke: (ctx, id) => revokeApiKey(deps, ctx, id),
    listWithError: (request, frame, error) => keysPage(request, frame, { error }),
  });

  pages.get('/settings/api-keys', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const revoked = query(request.query, 'revoked');
    const notice = revoked ? `API key ${revoked} is revoked: calls with it are refused.` : undefined;
    return kit.send(reply, 200, await keysPage(request, admin.frame, { notice }));
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
    const again = async (status: number, error: string) =>
      kit.send(reply, status, await keysPage(request, admin.frame, { error, form }));
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
      const created = { id: key.id, key: key.key, name: key.name };
      return kit.send(reply, 201, await keysPage(request, admin.frame, { created }));
    } catch (err) {
      const { status, message } = kit.failure(err);
      return again(status, message);
    }
  });
}

export function oauthClientRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  /** The clients page: the page of clients its address asks for (status), with what else it says. */
  async function clientsPage(
    request: FastifyRequest,
    frame: Frame,
    extra: Omit<OAuthClientsPageOptions, 'frame' | 'clients' | 'total' | 'at'> = {},
  ) {
    const at = listAt(request, '/settings/oauth-clients', (q) => ({ status: nonDefault(statusFilter(q)) }));
    const status = statusFilter({ status: at.filters.status });
    const { clients, total } = await listOAuthClients(deps, { status, page: at.page, limit: at.limit });
    return oauthClientsPage({ frame, clients, total, at, ...extra });
  }

  revocationRoutes(pages, kit, {
    section: '/settings/oauth-clients',
    what: 'OAuth client',
    async find(id) {
      const client = id ? await findOAuthClient(deps, id) : null;
      return client && !client.revokedAt ? `Revoke the OAuth client “${client.name}”?` : undefined;
    },
    consequence:
      'It can no longer sign users in, and every access and refresh token issued to it stops working. This cannot be undone.',
    revoke: (ctx, id) => revokeOAuthClient(deps, ctx, id),
    listWithError: (request, frame, error) => clientsPage(request, frame, { error }),
  });

  pages.get('/settings/oauth-clients', open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const revoked = query(request.query, 'revoked');
    const notice = revoked ? `OAuth client ${revoked} is revoked, with every token issued to it.` : undefined;
    return kit.send(reply, 200, await clientsPage(request, admin.frame, { notice }));
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
      return kit.send(reply, 201, await clientsPage(request, admin.frame, { created: client }));
    } catch (err) {
      const { status, message } = kit.failure(err);
      return kit.send(reply, status, await clientsPage(request, admin.frame, { error: message, form }));
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
    listWithError: (request: FastifyRequest, frame: Frame, error: string) => Promise<VNode>;
  },
): void {
  const path = `${spec.section}/revoke`;
  pages.get(path, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = query(request.query, 'id');
    const question = await spec.find(id);
    const body = question
      ? ConfirmBody({
          frame: admin.frame,
          action: path,
          id: id!,
          question,
          consequence: spec.consequence,
          button: `Revoke ${spec.what.split(' ').pop()}`,
          back: spec.section,
        })
      : Missing({
          message: `No active ${spec.what} with that id.`,
          back: spec.section,
          label: 'Back to the list',
        });
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
      return kit.send(reply, status, await spec.listWithError(request, admin.frame, message));
    }
    return reply.redirect(`${spec.section}?revoked=${encodeURIComponent(id)}`, 303);
  });
}
