import type { RequestsAdminClient } from '@support-desk/platform/clients';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type TrashPageOptions, trashPage } from '../pages/trash.js';
import { type FormBody, field, query } from '../forms.js';
import { type Admin, type ConsoleKit } from './console-session.js';
import { requestsFailure } from './console-sla-policies.js';

const open = { config: { public: true } };
const SECTION = '/settings/trash';

/**
 * `/settings/trash`: the deleted requests (with when each is purged for good) and Restore, through
 * the requests service's admin RPC, as the signed-in administrator (see console-sla-policies.ts).
 * Paged by the service's cursor (`?cursor=`): the trash counts nothing, so "older" and "newest"
 * links, not page numbers.
 */
export function trashRoutes(pages: FastifyInstance, kit: ConsoleKit, rpc: RequestsAdminClient): void {
  const failure = requestsFailure(kit);

  async function listPage(
    request: FastifyRequest,
    reply: FastifyReply,
    admin: Admin,
    extra: Pick<TrashPageOptions, 'notice' | 'error'> = {},
    status = 200,
  ) {
    const cursor = request.method === 'GET' ? query(request.query, 'cursor') : undefined;
    let page: Pick<TrashPageOptions, 'deleted' | 'nextCursor'> = { deleted: null, nextCursor: null };
    let error = extra.error;
    try {
      const r = await rpc.call(kit.actor(request, admin), 'trash.list', {
        limit: 20,
        ...(cursor && { cursor }),
      });
      page = { deleted: r.deleted, nextCursor: r.pagination.nextCursor };
    } catch (err) {
      const f = failure(err);
      error = f.message;
      if (status < 400) status = f.status;
    }
    const body = trashPage({ frame: admin.frame, ...page, older: Boolean(cursor), ...extra, error });
    return kit.send(reply, status, body);
  }

  pages.get(SECTION, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const restored = query(request.query, 'restored');
    return listPage(request, reply, admin, restored ? { notice: `Request ${restored} is restored.` } : {});
  });

  pages.post(`${SECTION}/restore`, open, async (request, reply) => {
    const admin = await kit.administrator(request, reply);
    if (!admin) return reply;
    const id = field((request.body ?? {}) as FormBody, 'id');
    try {
      await rpc.call(kit.actor(request, admin), 'trash.restore', { id });
    } catch (err) {
      const f = failure(err);
      return listPage(request, reply, admin, { error: f.message }, f.status);
    }
    return reply.redirect(`${SECTION}?restored=${encodeURIComponent(id)}`, 303);
  });
}
