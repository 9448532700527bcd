import type { RouteSchemaMap } from './routes.js';

/** Public request/response schemas of the identity service, keyed by route (see PUBLIC_ROUTES). */
export const identityRouteSchemas: RouteSchemaMap = {};
