import { requestsRouteSchemas as schemas } from '@support-desk/contracts';
import { contractRoute, type HttpApp, ifMatchRevisions } from '@support-desk/platform';
import type { Deps } from '../use-cases/deps.js';
import { getRequest, listRequests } from '../use-cases/queries.js';
import { createRequest, deleteRequest, updateRequest } from '../use-cases/requests.js';
import { addComment } from '../use-cases/comments.js';

export function requestRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(app, schemas, 'GET /v1/requests', (request) => listRequests(deps, request.query));
  contractRoute(app, schemas, 'POST /v1/requests', (request) =>
    createRequest(deps, request.principal, request.body),
  );
  contractRoute(app, schemas, 'GET /v1/requests/:id', (request) =>
    getRequest(deps, request.principal, request.params.id),
  );
  contractRoute(app, schemas, 'PATCH /v1/requests/:id', (request) =>
    updateRequest(
      deps,
      request.principal,
      request.params.id,
      request.body,
      ifMatchRevisions(request.headers['if-match']),
    ),
  );
  contractRoute(app, schemas, 'DELETE /v1/requests/:id', (request) =>
    deleteRequest(deps, request.principal, request.params.id, ifMatchRevisions(request.headers['if-match'])),
  );
  contractRoute(app, schemas, 'POST /v1/requests/:id/comments', (request) =>
    addComment(deps, request.principal, request.params.id, request.body),
  );
}
