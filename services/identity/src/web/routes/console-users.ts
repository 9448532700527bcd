import { USER_STATUSES } from '@support-desk/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageQuery } from '../pages/lists.js';
import { linkPage, noSuchUserPage, usersPage, type UsersPageOptions } from '../pages/users.js';
import { type FormBody, field, query } from '../forms.js';
import type { Deps } from '../../use-cases/deps.js';
import { linkUserToProvider, listDirectory } from '../../use-cases/provider-links.js';
import { findUser } from '../../use-cases/user-lookups.js';
import { type Admin, type ConsoleKit } from './console-session.js';

const open = { config: { public: true } };
const SECTION = '/settings/users';

/**
 * `/settings/users`: who signs in how, and the administrator's link of an existing user to an
 * identity provider connection (`linkUserToProvider`, the use case `deskctl users link` runs),
 * as the signed-in administrator from the request's address.
 */
export function userRoutes(pages: FastifyInstance, deps: Deps, kit: ConsoleKit): void {
  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    admin: Admin,
    extra: Pick<UsersPageOptions, 'notice' | 'error'> = {},
  ) {
    const q = request.query;
    const status = query(q, 'status');
    const filters = {
      search: query(q, 'search')?.trim() || undefined,
      idp: query(q, 'idp')?.trim() || undefined,
      status: (USER_STATUSES as readonly string[]).includes(status ?? '') ? status : undefined,
    };
    const at = { path: SECTION, filters, ...pageQuery(q) };
    const { users, total, providers } = await listDirectory(deps, {
      search: filters.search,
      identityProvider: filters.idp,
      status: filters.status as (typeof USER_STATUSES)[number] | undefined,
      page: at.page,
      limit: at.limit,
    });
    const page = usersPage({
      frame: admin.frame,
      users,
      total,
      at,
      providers,
      selfId: admin.user._id,
      ...extra,
    });
    return kit.send(reply, 200, page);
  }

  pages.get(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    // The notice is made here from the user as stored (an address says which user, never the words).
    const linked = await deps.users.findById(query(request.query, 'linked') ?? '');
    const notice =
      linked && linked.identityProvider !== 'local'
        ? `${linked.email} is linked to ${linked.identityProvider} as ${linked.externalId ?? '-'}: its SCIM calls manage the user.`
        : undefined;
    return listPage(request, reply, admin, notice ? { notice } : {});
  });

  /** The link form of one user; an unknown one is the list with the reason. */
  async function linkForm(
    reply: FastifyReply,
    admin: Admin,
    id: string,
    status = 200,
    extra: { form?: { idp?: string; external_id?: string }; error?: string } = {},
  ) {
    const user = await deps.users.findById(id);
    const { providers } = await listDirectory(deps, { page: 1, limit: 1 });
    if (!user) return kit.send(reply, 404, noSuchUserPage(admin.frame));
    const page = linkPage({
      frame: admin.frame,
      user: { id: user._id, email: user.email, name: user.name },
      providers,
      ...extra,
    });
    return kit.send(reply, status, page);
  }

  pages.get(`${SECTION}/link`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    return linkForm(reply, admin, query(request.query, 'id') ?? '');
  });

  pages.post(`${SECTION}/link`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const body = (request.body ?? {}) as FormBody;
    const id = field(body, 'id');
    const form = { idp: field(body, 'idp'), external_id: field(body, 'external_id') };
    try {
      const user = await findUser(deps, id);
      await linkUserToProvider(deps, kit.context(request, admin), {
        userId: user._id,
        provider: form.idp,
        externalId: form.external_id,
      });
      const params = new URLSearchParams({ idp: form.idp, linked: user._id });
      return reply.redirect(`${SECTION}?${params}`, 303);
    } catch (err) {
      const { status, message } = kit.failure(err);
      return linkForm(reply, admin, id, status, { form, error: message });
    }
  });
}
