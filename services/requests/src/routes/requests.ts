import { requestsRouteSchemas as schemas } from '@support-desk/contracts';
import { contractRoute, type HttpApp, listOrSearch } from '@support-desk/platform/http';
import { ifMatchRevisions, linkHeader, withPageLinks } from '@support-desk/platform/core';
import type { Deps } from '../use-cases/deps.js';
import { getRequest } from '../use-cases/queries.js';
import { listRequestChanges, listRequests } from '../use-cases/request-lists.js';
import { createRequest, deleteRequest, updateRequest } from '../use-cases/requests.js';
import { addComment, listComments } from '../use-cases/comments.js';
import { listDeletedRequests, restoreRequest } from '../use-cases/trash.js';
import { createBulkJob, getBulkJob } from '../use-cases/bulk-jobs.js';

export function requestRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(
    app,
    schemas,
    'GET /v1/requests',
    async (request, reply) => withPageLinks(request, reply, await listRequests(deps, request.query)),
    { config: { admission: listOrSearch } },
  );
  contractRoute(
    app,
    schemas,
    'GET /v1/requests/changes',
    async (request, reply) => {
      const answer = await listRequestChanges(deps, request.principal, request.query);
      // The next poll, as a link too (always there: the feed never ends).
      reply.header(
        'link',
        linkHeader(request.url, [{ rel: 'next', set: { cursor: answer.pagination.nextCursor } }]),
      );
      return answer;
    },
    { config: { admission: 'list' } },
  );
  contractRoute(
    app,
    schemas,
    'GET /v1/requests/deleted',
    async (request, reply) => {
      const answer = await listDeletedRequests(deps, request.query);
      const next = answer.pagination.nextCursor;
      if (next) reply.header('link', linkHeader(request.url, [{ rel: 'next', set: { cursor: next } }]));
      return answer;
    },
    { config: { admission: 'list' } },
  );
  contractRoute(app, schemas, 'POST /v1/requests/bulk', (request) =>
    createBulkJob(deps, request.principal, request.body),
  );
  contractRoute(app, schemas, 'GET /v1/jobs/:id', (request) =>
    getBulkJob(deps, request.principal, request.params.id, request.query),
  );
  contractRoute(app, schemas, 'POST /v1/requests/:id/restore', (request) =>
    restoreRequest(deps, request.principal, request.params.id),
  );
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
  contractRoute(app, schemas, 'GET /v1/requests/:id/comments', async (request, reply) =>
    withPageLinks(
      request,
      reply,
      await listComments(deps, request.principal, request.params.id, request.query),
    ),
  );
  contractRoute(app, schemas, 'POST /v1/requests/:id/comments', (request) =>
    addComment(deps, request.principal, request.params.id, request.body),
  );
}
