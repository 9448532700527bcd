import { auditRouteSchemas } from './audit.js';
import { identityRouteSchemas } from './identity.js';
import { requestsRouteSchemas } from './requests.js';
import { slaPoliciesRouteSchemas } from './sla-policies.js';
import type { RouteSchemaMap } from './routes.js';
import { webhooksRouteSchemas } from './webhooks.js';

/** Every public route's schemas by route key: the services' maps in one (what the OpenAPI document reads). */
export const PUBLIC_ROUTE_SCHEMAS: RouteSchemaMap = {
  ...requestsRouteSchemas,
  ...slaPoliciesRouteSchemas,
  ...identityRouteSchemas,
  ...auditRouteSchemas,
  ...webhooksRouteSchemas,
};
