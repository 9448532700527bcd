import { identityRouteSchemas as schemas } from '@support-desk/contracts';
import { contextFromPrincipal, ifMatchRevisions, withPageLinks } from '@support-desk/platform/core';
import { contractRoute, type HttpApp, listOrSearch } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import { createUser, deactivateUser, getMe, getUser, listUsers, updateUser } from '../use-cases/users.js';

export function userRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(
    app,
    schemas,
    'GET /v1/users',
    async (request, reply) => withPageLinks(request, reply, await listUsers(deps, request.query)),
    { config: { admission: listOrSearch } },
  );
  contractRoute(app, schemas, 'POST /v1/users', (request) =>
    createUser(deps, contextFromPrincipal(request.principal), request.body, {
      scopes: request.principal.scopes,
    }),
  );
  contractRoute(app, schemas, 'GET /v1/users/:id', (request) => getUser(deps, request.params.id));
  contractRoute(app, schemas, 'PATCH /v1/users/:id', (request) =>
    updateUser(deps, contextFromPrincipal(request.principal), request.params.id, request.body, {
      ifMatch: ifMatchRevisions(request.headers['if-match']),
      scopes: request.principal.scopes,
    }),
  );
  contractRoute(app, schemas, 'DELETE /v1/users/:id', (request) =>
    deactivateUser(deps, contextFromPrincipal(request.principal), request.params.id, {
      ifMatch: ifMatchRevisions(request.headers['if-match']),
      scopes: request.principal.scopes,
    }),
  );
  contractRoute(app, schemas, 'GET /v1/me', (request) => getMe(deps, request.principal));
}
