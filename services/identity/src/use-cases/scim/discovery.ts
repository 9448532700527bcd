import { MAX_COUNT } from './calls.js';
import { scimNotFound } from './errors.js';
import { ENTERPRISE_SCHEMA, GROUP_SCHEMA, type Location, USER_SCHEMA } from './resources.js';
import { SCHEMAS } from './schema.js';

/** The discovery endpoints (RFC 7644 §4): what this service provider supports, and its schemas. */

const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';

export function serviceProviderConfig(at: Location) {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: 'https://github.com/support-desk/support-desk/blob/main/services/identity/README.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer token',
        description: 'The connection token printed once by `deskctl idp create NAME --kind scim`.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${at.baseUrl}/ServiceProviderConfig` },
  };
}

const schemaResource = (s: (typeof SCHEMAS)[number], at: Location) => ({
  schemas: [SCHEMA_SCHEMA],
  ...s,
  meta: { resourceType: 'Schema', location: `${at.baseUrl}/Schemas/${s.id}` },
});

const RESOURCE_TYPES = [
  {
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    schema: USER_SCHEMA,
    schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }],
  },
  { id: 'Group', name: 'Group', endpoint: '/Groups', schema: GROUP_SCHEMA, schemaExtensions: [] },
];

const resourceTypeResource = (r: (typeof RESOURCE_TYPES)[number], at: Location) => ({
  schemas: [RESOURCE_TYPE_SCHEMA],
  ...r,
  meta: { resourceType: 'ResourceType', location: `${at.baseUrl}/ResourceTypes/${r.id}` },
});

const list = (resources: object[]) => ({
  schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

export const listSchemas = (at: Location) => list(SCHEMAS.map((s) => schemaResource(s, at)));

export function getSchema(at: Location, id: string) {
  const schema = SCHEMAS.find((s) => s.id === id);
  if (!schema) throw scimNotFound('Schema', id);
  return schemaResource(schema, at);
}

export const listResourceTypes = (at: Location) =>
  list(RESOURCE_TYPES.map((r) => resourceTypeResource(r, at)));

export function getResourceType(at: Location, id: string) {
  const type = RESOURCE_TYPES.find((r) => r.id === id);
  if (!type) throw scimNotFound('ResourceType', id);
  return resourceTypeResource(type, at);
}
