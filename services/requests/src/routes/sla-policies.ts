import { slaPoliciesRouteSchemas as schemas } from '@support-desk/contracts';
import { contextFromPrincipal } from '@support-desk/platform/core';
import { contractRoute, type HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import {
  createSlaPolicy,
  deleteSlaPolicy,
  getSlaPolicy,
  listSlaPolicies,
  updateSlaPolicy,
} from '../use-cases/sla-policies.js';

/** The SLA policies API: agents and viewers read (requests:read), admins change (admin). */
export function slaPolicyRoutes(app: HttpApp, deps: Deps): void {
  contractRoute(app, schemas, 'GET /v1/sla-policies', () => listSlaPolicies(deps));
  contractRoute(app, schemas, 'POST /v1/sla-policies', (request) =>
    createSlaPolicy(deps, contextFromPrincipal(request.principal), request.body),
  );
  contractRoute(app, schemas, 'GET /v1/sla-policies/:id', (request) => getSlaPolicy(deps, request.params.id));
  contractRoute(app, schemas, 'PATCH /v1/sla-policies/:id', (request) =>
    updateSlaPolicy(deps, contextFromPrincipal(request.principal), request.params.id, request.body),
  );
  contractRoute(app, schemas, 'DELETE /v1/sla-policies/:id', (request) =>
    deleteSlaPolicy(deps, contextFromPrincipal(request.principal), request.params.id),
  );
}
