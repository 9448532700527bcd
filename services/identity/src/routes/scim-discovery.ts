import type { FastifyInstance } from 'fastify';
import {
  getResourceType,
  getSchema,
  listResourceTypes,
  listSchemas,
  serviceProviderConfig,
} from '../use-cases/scim/discovery.js';

type Id = { Params: { id: string } };

/** ServiceProviderConfig, ResourceTypes and Schemas (RFC 7644 §4). */
export function scimDiscoveryRoutes(scope: FastifyInstance): void {
  scope.get('/ServiceProviderConfig', async (request) => serviceProviderConfig(request.scim.at));
  scope.get('/ResourceTypes', async (request) => listResourceTypes(request.scim.at));
  scope.get<Id>('/ResourceTypes/:id', async (request) => getResourceType(request.scim.at, request.params.id));
  scope.get('/Schemas', async (request) => listSchemas(request.scim.at));
  scope.get<Id>('/Schemas/:id', async (request) => getSchema(request.scim.at, request.params.id));
}
