import { auditRouteSchemas, type EventsQuery, type Scope } from '@support-desk/contracts';
import { type HttpApp, ok, requireScope } from '@support-desk/platform';
import type { FastifyRequest } from 'fastify';
import type { EventsService } from '../app/events.js';

/** Scope check before schema validation, so a caller without access learns nothing from a 400. */
const needs = (scope: Scope) => async (request: FastifyRequest) => requireScope(request, scope);

/** The read-only events API; there is deliberately no route that writes events. */
export function registerEventRoutes(app: HttpApp, events: EventsService): void {
  const list = auditRouteSchemas['GET /v1/events'];
  app.get(
    '/v1/events',
    {
      schema: { querystring: list.querystring, response: list.response },
      preValidation: needs('admin'),
    },
    async (request) => ok(await events.list(request.query as EventsQuery)),
  );

  const one = auditRouteSchemas['GET /v1/events/:id'];
  app.get(
    '/v1/events/:id',
    { schema: { params: one.params, response: one.response }, preValidation: needs('admin') },
    async (request) => ok(await events.get((request.params as { id: string }).id)),
  );

  const ofRequest = auditRouteSchemas['GET /v1/requests/:id/events'];
  app.get(
    '/v1/requests/:id/events',
    {
      schema: { params: ofRequest.params, response: ofRequest.response },
      preValidation: needs('requests:read'),
    },
    async (request) => {
      const requestId = (request.params as { id: string }).id;
      const { events: items, truncated } = await events.ofRequest(requestId);
      if (truncated) request.log.warn({ requestId }, 'request events list truncated to its oldest events');
      return ok({ events: items });
    },
  );
}
