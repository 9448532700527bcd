import type { RouteSchemaMap } from './routes.js';

/** Public request/response schemas of the requests service, keyed by route (see PUBLIC_ROUTES). */
export const requestsRouteSchemas: RouteSchemaMap = {};
