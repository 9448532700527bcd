import { auditRouteSchemas as schemas, hasScope } from '@support-desk/contracts';
import { contractRoute, type HttpApp } from '@support-desk/platform';
import type { EventsService } from '../use-cases/events.js';

/** The read-only events API; there is deliberately no route that writes events. */
export function registerRoutes(app: HttpApp, events: EventsService): void {
  contractRoute(app, schemas, 'GET /v1/events', (request) => events.list(request.query));
  contractRoute(app, schemas, 'GET /v1/events/:id', (request) => events.get(request.params.id));
  contractRoute(app, schemas, 'GET /v1/requests/:id/events', async (request) => {
    const requestId = request.params.id;
    const admin = hasScope(request.principal.scopes, 'admin');
    const { events: items, truncated } = await events.ofRequest(requestId, { admin });
    if (truncated) request.log.warn({ requestId }, 'request events list truncated to its oldest events');
    return { events: items };
  });
}
