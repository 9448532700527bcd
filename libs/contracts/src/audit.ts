import type { RouteSchemaMap } from './routes.js';

/** Public request/response schemas of the audit service, keyed by route (see PUBLIC_ROUTES). */
export const auditRouteSchemas: RouteSchemaMap = {};
