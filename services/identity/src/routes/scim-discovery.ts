import type { FastifyInstance } from 'fastify';
import { ScimError } from '../use-cases/scim/errors.js';
import {
  getResourceType,
  getSchema,
  listResourceTypes,
  listSchemas,
  serviceProviderConfig,
} from '../use-cases/scim/discovery.js';

type Id = { Params: { id: string } };

const DISCOVERY = [
  '/ServiceProviderConfig',
  '/ResourceTypes',
  '/ResourceTypes/:id',
  '/Schemas',
  '/Schemas/:id',
];

/**
 * The methods a SCIM endpoint does not serve answer 405 with `Allow` (RFC 7231 §6.5.5), not 404:
 * the endpoint exists. And a search by POST (RFC 7644 §3.4.3, optional) answers 501, as §3.12
 * says of an operation the service provider does not support.
 */
export function scimUnsupportedRoutes(scope: FastifyInstance): void {
  const notAllowed = (url: string, methods: string[], allow: string) =>
    scope.route({
      method: methods,
      url,
      handler: async (request, reply) => {
        reply.header('allow', allow);
        throw new ScimError(405, null, `${request.method} is not allowed on ${url}; allowed: ${allow}`);
      },
    });
  for (const url of DISCOVERY) notAllowed(url, ['POST', 'PUT', 'PATCH', 'DELETE'], 'GET');
  for (const url of ['/Users', '/Groups']) notAllowed(url, ['PUT', 'PATCH', 'DELETE'], 'GET, POST');
  for (const url of ['/Users/:id', '/Groups/:id']) notAllowed(url, ['POST'], 'GET, PUT, PATCH, DELETE');
  for (const url of ['/.search', '/Users/.search', '/Groups/.search']) {
    scope.post(url, async () => {
      throw new ScimError(501, null, 'Searching with POST is not supported; use GET with filter');
    });
  }
}

/** ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4). */
export function scimDiscoveryRoutes(scope: FastifyInstance): void {
  scope.get('/ServiceProviderConfig', async (request) => serviceProviderConfig(request.scim.at));
  scope.get('/ResourceTypes', async (request) => listResourceTypes(request.scim.at));
  scope.get<Id>('/ResourceTypes/:id', async (request) => getResourceType(request.scim.at, request.params.id));
  scope.get('/Schemas', async (request) => listSchemas(request.scim.at));
  scope.get<Id>('/Schemas/:id', async (request) => getSchema(request.scim.at, request.params.id));
}
