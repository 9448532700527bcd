import { identityRouteSchemas, type RouteSchemas } from '@support-desk/contracts';
import type { FastifySchema } from 'fastify';

/**
 * The fastify schema of a public route, taken from the contracts map the gateway's OpenAPI is
 * generated from: requests are validated by the very schemas that are documented. Only success
 * responses are serialized by schema; errors are rendered by the platform's error handler.
 */
export function routeSchema(key: string): FastifySchema {
  const r: RouteSchemas | undefined = identityRouteSchemas[key];
  if (!r) throw new Error(`no contract schema for ${key}`);
  const response = Object.fromEntries(Object.entries(r.response).filter(([status]) => Number(status) < 300));
  return {
    ...(r.params ? { params: r.params } : {}),
    ...(r.querystring ? { querystring: r.querystring } : {}),
    ...(r.body ? { body: r.body } : {}),
    response,
  };
}
