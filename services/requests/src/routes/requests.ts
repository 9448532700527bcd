import type { CreateRequestBody, ListRequestsQuery, UpdateRequestBody } from '@support-desk/contracts';
import { requestsRouteSchemas as S } from '@support-desk/contracts';
import { type HttpApp, ok, requireScope } from '@support-desk/platform';
import type { Core } from '../app/core.js';
import { getRequest, listRequests } from '../app/queries.js';
import { createRequest, deleteRequest, updateRequest } from '../app/requests.js';

type IdParams = { id: string };

export function requestRoutes(app: HttpApp, core: Core): void {
  app.get<{ Querystring: ListRequestsQuery }>(
    '/v1/requests',
    { schema: S['GET /v1/requests'] },
    async (request) => {
      requireScope(request, 'requests:read');
      return ok(await listRequests(core, request.query));
    },
  );

  app.post<{ Body: CreateRequestBody }>(
    '/v1/requests',
    { schema: S['POST /v1/requests'] },
    async (request, reply) => {
      requireScope(request, 'requests:write');
      return reply.code(201).send(ok(await createRequest(core, request.principal, request.body)));
    },
  );

  app.get<{ Params: IdParams }>(
    '/v1/requests/:id',
    { schema: S['GET /v1/requests/:id'] },
    async (request) => {
      requireScope(request, 'requests:read');
      return ok(await getRequest(core, request.principal, request.params.id));
    },
  );

  app.patch<{ Params: IdParams; Body: UpdateRequestBody }>(
    '/v1/requests/:id',
    { schema: S['PATCH /v1/requests/:id'] },
    async (request) => {
      requireScope(request, 'requests:write');
      return ok(await updateRequest(core, request.principal, request.params.id, request.body));
    },
  );

  app.delete<{ Params: IdParams }>(
    '/v1/requests/:id',
    { schema: S['DELETE /v1/requests/:id'] },
    async (request) => {
      requireScope(request, 'admin');
      return ok(await deleteRequest(core, request.principal, request.params.id));
    },
  );
}
