import type { AddCommentBody } from '@support-desk/contracts';
import { requestsRouteSchemas as S } from '@support-desk/contracts';
import { type HttpApp, ok, requireScope } from '@support-desk/platform';
import { addComment } from '../app/comments.js';
import type { Core } from '../app/core.js';

export function commentRoutes(app: HttpApp, core: Core): void {
  app.post<{ Params: { id: string }; Body: AddCommentBody }>(
    '/v1/requests/:id/comments',
    { schema: S['POST /v1/requests/:id/comments'] },
    async (request, reply) => {
      requireScope(request, 'requests:write');
      const comment = await addComment(core, request.principal, request.params.id, request.body);
      return reply.code(201).send(ok(comment));
    },
  );
}
