import type { FastifyInstance } from 'fastify';
import type { Deps } from '../use-cases/deps.js';
import type { ListParams } from '../use-cases/scim/calls.js';
import { invalidValue } from '../use-cases/scim/errors.js';
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from '../use-cases/scim/groups.js';
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
} from '../use-cases/scim/users.js';

type Id = { Params: { id: string }; Querystring: ListParams };
type Body = Record<string, unknown>;

/** A SCIM resource body must be a JSON object. */
function objectBody(body: unknown): Body {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw invalidValue('the body must be a JSON object');
  return body as Body;
}

/** Users and Groups (RFC 7644 §3): each handler is one call into the SCIM use cases. */
export function scimResourceRoutes(scope: FastifyInstance, deps: Deps): void {
  scope.get<{ Querystring: ListParams }>('/Users', async (request) =>
    listScimUsers(deps, request.scim, request.query),
  );
  scope.post('/Users', async (request, reply) => {
    reply.code(201);
    return createScimUser(deps, request.scim, objectBody(request.body));
  });
  scope.get<Id>('/Users/:id', async (request) =>
    getScimUser(deps, request.scim, request.params.id, request.query),
  );
  scope.put<Id>('/Users/:id', async (request) =>
    replaceScimUser(deps, request.scim, request.params.id, objectBody(request.body)),
  );
  scope.patch<Id>('/Users/:id', async (request) =>
    patchScimUser(deps, request.scim, request.params.id, objectBody(request.body)),
  );
  scope.delete<Id>('/Users/:id', async (request, reply) => {
    await deleteScimUser(deps, request.scim, request.params.id);
    return reply.code(204).send();
  });

  scope.get<{ Querystring: ListParams }>('/Groups', async (request) =>
    listScimGroups(deps, request.scim, request.query),
  );
  scope.post('/Groups', async (request, reply) => {
    reply.code(201);
    return createScimGroup(deps, request.scim, objectBody(request.body));
  });
  scope.get<Id>('/Groups/:id', async (request) =>
    getScimGroup(deps, request.scim, request.params.id, request.query),
  );
  scope.put<Id>('/Groups/:id', async (request) =>
    replaceScimGroup(deps, request.scim, request.params.id, objectBody(request.body)),
  );
  scope.patch<Id>('/Groups/:id', async (request) =>
    patchScimGroup(deps, request.scim, request.params.id, objectBody(request.body)),
  );
  scope.delete<Id>('/Groups/:id', async (request, reply) => {
    await deleteScimGroup(deps, request.scim, request.params.id);
    return reply.code(204).send();
  });
}
