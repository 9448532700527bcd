import { webhooksRouteSchemas as schemas } from '@support-desk/contracts';
import { contextFromPrincipal, withPageLinks } from '@support-desk/platform/core';
import { contractRoute, type HttpApp } from '@support-desk/platform/http';
import { listDeliveries, ping, replayDelivery } from '../use-cases/deliveries.js';
import type { Deps } from '../use-cases/deps.js';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSecret,
  updateSubscription,
} from '../use-cases/subscriptions.js';
import { toSubscriptionView } from '../use-cases/views.js';

/** The webhooks API (admin scope, checked by `contractRoute` from PUBLIC_ROUTES). */
export function registerRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(
    app,
    schemas,
    'GET /v1/webhooks',
    async (request, reply) => withPageLinks(request, reply, await listSubscriptions(deps, request.query)),
    { config: { admission: 'list' } },
  );
  contractRoute(app, schemas, 'POST /v1/webhooks', (request) =>
    createSubscription(deps, contextFromPrincipal(request.principal), request.body),
  );
  contractRoute(app, schemas, 'GET /v1/webhooks/:id', async (request) =>
    toSubscriptionView(await getSubscription(deps, request.params.id), deps.clock()),
  );
  contractRoute(app, schemas, 'PATCH /v1/webhooks/:id', (request) =>
    updateSubscription(deps, contextFromPrincipal(request.principal), request.params.id, request.body),
  );
  contractRoute(app, schemas, 'DELETE /v1/webhooks/:id', (request) =>
    deleteSubscription(deps, contextFromPrincipal(request.principal), request.params.id),
  );
  contractRoute(app, schemas, 'POST /v1/webhooks/:id/rotate-secret', (request) =>
    rotateSecret(deps, contextFromPrincipal(request.principal), request.params.id),
  );
  contractRoute(app, schemas, 'POST /v1/webhooks/:id/ping', (request) => ping(deps, request.params.id));
  contractRoute(
    app,
    schemas,
    'GET /v1/webhooks/:id/deliveries',
    async (request, reply) =>
      withPageLinks(request, reply, await listDeliveries(deps, request.params.id, request.query)),
    { config: { admission: 'list' } },
  );
  contractRoute(app, schemas, 'POST /v1/webhooks/:id/deliveries/:deliveryId/replay', (request) =>
    replayDelivery(deps, request.params.id, request.params.deliveryId),
  );
}
