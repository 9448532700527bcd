import type { CreateGroupBody, UpdateGroupBody } from '@support-desk/contracts';
import { contextFromPrincipal, type HttpApp, ok, requireScope } from '@support-desk/platform';
import type { Deps } from '../app/context.js';
import {
  addMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  listMembers,
  removeMember,
  updateGroup,
} from '../app/groups.js';
import { routeSchema } from './schemas.js';

type IdParams = { id: string };

export function groupRoutes(app: HttpApp, deps: Deps): void {
  app.get('/v1/groups', { schema: routeSchema('GET /v1/groups') }, async (request) => {
    requireScope(request, 'users:read');
    return ok(await listGroups(deps));
  });

  app.post('/v1/groups', { schema: routeSchema('POST /v1/groups') }, async (request, reply) => {
    requireScope(request, 'users:write');
    const group = await createGroup(
      deps,
      contextFromPrincipal(request.principal),
      request.body as CreateGroupBody,
    );
    return reply.code(201).send(ok(group));
  });

  app.get('/v1/groups/:id', { schema: routeSchema('GET /v1/groups/:id') }, async (request) => {
    requireScope(request, 'users:read');
    return ok(await getGroup(deps, (request.params as IdParams).id));
  });

  app.patch('/v1/groups/:id', { schema: routeSchema('PATCH /v1/groups/:id') }, async (request) => {
    requireScope(request, 'users:write');
    const ctx = contextFromPrincipal(request.principal);
    return ok(await updateGroup(deps, ctx, (request.params as IdParams).id, request.body as UpdateGroupBody));
  });

  app.delete('/v1/groups/:id', { schema: routeSchema('DELETE /v1/groups/:id') }, async (request) => {
    requireScope(request, 'users:write');
    return ok(
      await deleteGroup(deps, contextFromPrincipal(request.principal), (request.params as IdParams).id),
    );
  });

  app.get(
    '/v1/groups/:id/members',
    { schema: routeSchema('GET /v1/groups/:id/members') },
    async (request) => {
      requireScope(request, 'users:read');
      const q = request.query as { page?: number; limit?: number };
      return ok(await listMembers(deps, (request.params as IdParams).id, q.page, q.limit));
    },
  );

  app.post(
    '/v1/groups/:id/members',
    { schema: routeSchema('POST /v1/groups/:id/members') },
    async (request) => {
      requireScope(request, 'users:write');
      const ctx = contextFromPrincipal(request.principal);
      const { userId } = request.body as { userId: string };
      return ok(await addMember(deps, ctx, (request.params as IdParams).id, userId));
    },
  );

  app.delete(
    '/v1/groups/:id/members/:userId',
    { schema: routeSchema('DELETE /v1/groups/:id/members/:userId') },
    async (request) => {
      requireScope(request, 'users:write');
      const ctx = contextFromPrincipal(request.principal);
      const { id, userId } = request.params as { id: string; userId: string };
      return ok(await removeMember(deps, ctx, id, userId));
    },
  );
}
