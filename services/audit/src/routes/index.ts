import { Readable } from 'node:stream';
import { auditRouteSchemas as schemas, hasScope } from '@support-desk/contracts';
import { AppError, linkHeader, paginationLinks } from '@support-desk/platform/core';
import { contractRoute, type HttpApp } from '@support-desk/platform/http';
import Negotiator from 'negotiator';
import type { EventsService } from '../use-cases/events.js';
import type { EventExporter } from '../use-cases/export.js';
import type { RequestHistoryReader } from '../use-cases/request-events.js';

const NDJSON = 'application/x-ndjson';
/** Pages of the rest of a history cut at its maximum, as the `Link` of the spec's answer. */
const HISTORY_PAGE = 100;

export interface AuditRoutes {
  events: EventsService;
  requestHistory: RequestHistoryReader;
  exportEvents: EventExporter;
}

/** The read-only events API; there is deliberately no route that writes events. */
export function registerRoutes(app: HttpApp, { events, requestHistory, exportEvents }: AuditRoutes): void {
  contractRoute(
    app,
    schemas,
    'GET /v1/events',
    async (request, reply) => {
      const list = await events.list(request.query);
      const link = paginationLinks(request.url, list.pagination);
      if (link) reply.header('link', link);
      return list;
    },
    { config: { admission: 'list' } },
  );

  // Streamed (not through the envelope): NDJSON lines as the exporter produces them, with the
  // socket's backpressure; errors before the first line are still the envelope.
  contractRoute(
    app,
    schemas,
    'GET /v1/events/export',
    async (request, reply) => {
      if (!new Negotiator(request.raw).mediaType([NDJSON])) {
        throw new AppError(
          'NOT_ACCEPTABLE',
          `The export is served as ${NDJSON} only: send Accept: ${NDJSON} (or */*)`,
        );
      }
      const lines = await exportEvents(request.query);
      return (
        reply
          .type(NDJSON)
          .header('cache-control', 'no-store')
          .header('x-content-type-options', 'nosniff')
          // One chunk in hand at a time: the next is produced only once the socket took this one.
          .send(Readable.from(lines, { highWaterMark: 1 }))
      );
    },
    { config: { admission: 'export' } },
  );

  contractRoute(app, schemas, 'GET /v1/events/:id', (request) => events.get(request.params.id));

  contractRoute(
    app,
    schemas,
    'GET /v1/requests/:id/events',
    async (request, reply) => {
      const requestId = request.params.id;
      const admin = hasScope(request.principal.scopes, 'admin');
      const history = await requestHistory(requestId, { admin }, request.query);
      if (history.pagination) {
        const link = paginationLinks(request.url, history.pagination);
        if (link) reply.header('link', link);
        return { events: history.events, pagination: history.pagination };
      }
      if (history.truncated) {
        request.log.warn({ requestId }, 'request events list truncated to its oldest events');
        const link = linkHeader(request.url, [
          { rel: 'next', set: { cursor: history.nextCursor ?? undefined, limit: HISTORY_PAGE } },
        ]);
        if (link) reply.header('link', link);
      }
      return { events: history.events };
    },
    { config: { admission: 'list' } },
  );
}
