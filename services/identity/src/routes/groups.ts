import { identityRouteSchemas as schemas } from '@support-desk/contracts';
import { contextFromPrincipal, ifMatchRevisions, withPageLinks } from '@support-desk/platform/core';
import { contractRoute, type HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import {
  addMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroups,
  listMembers,
  removeMember,
  updateGroup,
} from '../use-cases/groups.js';

export function groupRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(app, schemas, 'GET /v1/groups', () => listGroups(deps), { config: { admission: 'list' } });
  contractRoute(app, schemas, 'POST /v1/groups', (request) =>
    createGroup(deps, contextFromPrincipal(request.principal), request.body),
  );
  contractRoute(app, schemas, 'GET /v1/groups/:id', (request) => getGroup(deps, request.params.id));
  contractRoute(app, schemas, 'PATCH /v1/groups/:id', (request) =>
    updateGroup(deps, contextFromPrincipal(request.principal), request.params.id, request.body, {
      ifMatch: ifMatchRevisions(request.headers['if-match']),
    }),
  );
  contractRoute(app, schemas, 'DELETE /v1/groups/:id', (request) =>
    deleteGroup(deps, contextFromPrincipal(request.principal), request.params.id, {
      ifMatch: ifMatchRevisions(request.headers['if-match']),
    }),
  );
  contractRoute(
    app,
    schemas,
    'GET /v1/groups/:id/members',
    async (request, reply) =>
      withPageLinks(request, reply, await listMembers(deps, request.params.id, request.query)),
    { config: { admission: 'list' } },
  );
  contractRoute(app, schemas, 'POST /v1/groups/:id/members', (request) =>
    addMember(deps, contextFromPrincipal(request.principal), request.params.id, request.body.userId, {
      scopes: request.principal.scopes,
    }),
  );
  contractRoute(app, schemas, 'DELETE /v1/groups/:id/members/:userId', (request) =>
    removeMember(deps, contextFromPrincipal(request.principal), request.params.id, request.params.userId, {
      scopes: request.principal.scopes,
    }),
  );
}
