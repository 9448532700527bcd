import type { CreateUserBody, UpdateUserBody, UserListQuery } from '@support-desk/contracts';
import { contextFromPrincipal, type HttpApp, ok, requireScope } from '@support-desk/platform';
import type { Deps } from '../app/context.js';
import { createUser, deactivateUser, getMe, getUser, listUsers, updateUser } from '../app/users.js';
import { routeSchema } from './schemas.js';

type IdParams = { id: string };

export function userRoutes(app: HttpApp, deps: Deps): void {
  app.get('/v1/users', { schema: routeSchema('GET /v1/users') }, async (request) => {
    requireScope(request, 'users:read');
    return ok(await listUsers(deps, request.query as UserListQuery));
  });

  app.post('/v1/users', { schema: routeSchema('POST /v1/users') }, async (request, reply) => {
    requireScope(request, 'users:write');
    const user = await createUser(
      deps,
      contextFromPrincipal(request.principal),
      request.body as CreateUserBody,
    );
    return reply.code(201).send(ok(user));
  });

  app.get('/v1/users/:id', { schema: routeSchema('GET /v1/users/:id') }, async (request) => {
    requireScope(request, 'users:read');
    return ok(await getUser(deps, (request.params as IdParams).id));
  });

  app.patch('/v1/users/:id', { schema: routeSchema('PATCH /v1/users/:id') }, async (request) => {
    requireScope(request, 'users:write');
    const ctx = contextFromPrincipal(request.principal);
    return ok(await updateUser(deps, ctx, (request.params as IdParams).id, request.body as UpdateUserBody));
  });

  app.delete('/v1/users/:id', { schema: routeSchema('DELETE /v1/users/:id') }, async (request) => {
    requireScope(request, 'users:write');
    const ctx = contextFromPrincipal(request.principal);
    return ok(await deactivateUser(deps, ctx, (request.params as IdParams).id));
  });

  app.get('/v1/me', { schema: routeSchema('GET /v1/me') }, async (request) => {
    return ok(await getMe(deps, request.principal));
  });
}
