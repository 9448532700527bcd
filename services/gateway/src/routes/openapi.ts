import {
  auditRouteSchemas,
  ErrorEnvelope,
  identityRouteSchemas,
  PUBLIC_ROUTES,
  type PublicRoute,
  type RouteSchemaMap,
  type RouteSchemas,
  requestsRouteSchemas,
  routeKey,
  SCOPE_DESCRIPTIONS,
  SCOPES,
} from '@support-desk/contracts';
import type { TSchema } from '@sinclair/typebox';
import { takesIdempotencyKey } from '../use-cases/idempotency.js';
import { openApiPath, pathParams } from '../use-cases/route-table.js';
import { oauthPaths } from './openapi-oauth.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Public base address (`{base_url}` without `/v1`), e.g. https://desk.example.com. */
  serverUrl: string;
  routes?: readonly PublicRoute[];
  schemaMaps?: RouteSchemaMap[];
}

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'VALIDATION_ERROR: the input is invalid (the message names the field)',
  '401': 'UNAUTHORIZED: missing, invalid, expired or revoked credential',
  '403': 'FORBIDDEN: the credential lacks the scope, or the address is not allowed',
  '404': 'NOT_FOUND: no such resource',
  '405': 'METHOD_NOT_ALLOWED: the path exists but not with this method; Allow lists the methods it has',
  '409':
    'CONFLICT: the resource is in another state, or a call with this Idempotency-Key is still running (see Retry-After)',
  '413':
    'PAYLOAD_TOO_LARGE: the body exceeds its limit (named in human units, e.g. "JSON bodies are limited to 1 MiB")',
  '422':
    'IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used for a different request (method, path, query or body)',
  '429': 'RATE_LIMITED: the bucket named in the message is exhausted; see Retry-After',
  '500': 'SERVER_ERROR: internal error (the message carries an error id)',
  '502': 'SERVER_ERROR: the owning service is unreachable',
  '503': 'SERVICE_UNAVAILABLE: a dependency is unavailable',
  '504': 'SERVICE_UNAVAILABLE: the owning service did not answer in time',
};

const RATE_HEADERS: Record<string, string> = {
  'X-RateLimit-Limit': 'Requests allowed in the window for this bucket',
  'X-RateLimit-Remaining': 'Requests left in the window',
  'X-RateLimit-Reset': 'Unix time (seconds) at which at least one more request is admitted',
  'RateLimit-Policy': 'IETF draft: "<bucket>";q=<limit>;w=<window seconds>',
  RateLimit: 'IETF draft: "<bucket>";r=<remaining>;t=<seconds to reset>',
};

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the call safe to retry: the first answer (status, body, Location) is kept for 24 h per ' +
    'credential and key, and a retry with the same key and the same request gets it again ' +
    '(`Idempotent-Replayed: true`) instead of running twice. The same key with a different request ' +
    'is 422; a retry while the first call runs is 409 with Retry-After; 5xx answers are not kept. ' +
    '1–255 printable ASCII characters (a UUID is a good key).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  example: '5f0c6a4e-2b1d-4c53-9a57-0d3f8e1b7c21',
};

/** TypeBox → plain JSON Schema; every schema carrying `$id` becomes a component and a `$ref`. */
function schemaTo(schema: TSchema | Json, components: Json): Json {
  const plain = JSON.parse(JSON.stringify(schema)) as Json;
  const walk = (node: unknown, isRoot: boolean): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, false));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    const out: Json = {};
    for (const [k, v] of Object.entries(obj)) if (k !== '$id') out[k] = walk(v, false);
    if (typeof obj.$id === 'string' && !isRoot) {
      const name = obj.$id.replace(/[^A-Za-z0-9._-]/g, '_');
      components[name] = out;
      return { $ref: `#/components/schemas/${name}` };
    }
    return out;
  };
  return walk(plain, false) as Json;
}

const ANY_OK = {
  type: 'object',
  required: ['success', 'data'],
  properties: { success: { const: true }, data: {} },
};

function parameters(route: PublicRoute, s: RouteSchemas | undefined, components: Json): Json[] {
  const out: Json[] = [];
  const params = s?.params ? (schemaTo(s.params, components).properties as Json | undefined) : undefined;
  for (const name of pathParams(route.path)) {
    out.push({ name, in: 'path', required: true, schema: (params?.[name] as Json) ?? { type: 'string' } });
  }
  if (s?.querystring) {
    const q = schemaTo(s.querystring, components);
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties as Json | undefined) ?? {})) {
      const { description, ...rest } = schema as Json;
      out.push({
        name,
        in: 'query',
        required: required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

function requestBody(s: RouteSchemas | undefined, components: Json): Json | undefined {
  if (!s?.body && !s?.consumes) return undefined;
  const schema = s.body
    ? schemaTo(s.body, components)
    : { type: 'object', properties: { file: { type: 'string', format: 'binary' } }, required: ['file'] };
  const types = s.consumes ?? ['application/json'];
  return { required: true, content: Object.fromEntries(types.map((t) => [t, { schema }])) };
}

/** POST and PATCH take an Idempotency-Key (the gateway's `routes/idempotency.ts`). */
const isKeyed = (route: PublicRoute) => takesIdempotencyKey(route.method);

function successResponses(route: PublicRoute, s: RouteSchemas | undefined, components: Json): Json {
  const headers: Json = Object.fromEntries(
    Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]),
  );
  if (isKeyed(route)) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  if (!s) {
    const status = route.method === 'POST' ? '201' : '200';
    return {
      [status]: { description: route.summary, headers, content: { 'application/json': { schema: ANY_OK } } },
    };
  }
  const out: Json = {};
  for (const [status, schema] of Object.entries(s.response)) {
    const content = s.produces
      ? Object.fromEntries(s.produces.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]))
      : { 'application/json': { schema: schemaTo(schema, components) } };
    out[status] = { description: s.description ?? route.summary, headers, content };
  }
  return out;
}

const operationId = (route: PublicRoute) =>
  `${route.method.toLowerCase()}${route.path
    .split('/')
    .filter(Boolean)
    .map((p) =>
      p.startsWith(':') ? `By${p[1].toUpperCase()}${p.slice(2)}` : p[0].toUpperCase() + p.slice(1),
    )
    .join('')}`;

/**
 * The public API as one OpenAPI 3.1 document: every PUBLIC_ROUTES entry with the schemas its
 * service validates with (the RouteSchemaMaps in contracts), the scope it needs, its rate bucket
 * and the common error envelope. Routes whose schemas have not been published yet still appear,
 * with a generic success envelope.
 */
export function buildOpenApi({
  serverUrl,
  routes = PUBLIC_ROUTES,
  schemaMaps = [requestsRouteSchemas, identityRouteSchemas, auditRouteSchemas],
}: OpenApiOptions): Json {
  const schemas: Json = {};
  schemas.ErrorEnvelope = schemaTo({ ...ErrorEnvelope, $id: undefined }, schemas);
  const merged: RouteSchemaMap = Object.assign({}, ...schemaMaps);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const s = merged[routeKey(route)];
    const scopes = route.scope === 'authenticated' ? [] : [route.scope];
    const body = requestBody(s, schemas);
    const keyed = isKeyed(route);
    const errors = [
      ...['400', '401', '403', '404', ...(keyed ? ['409'] : []), ...(body ? ['413'] : [])],
      ...[...(keyed ? ['422'] : []), '429', '500', '502', '503', '504'],
    ];
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: operationId(route),
      tags: [route.path.split('/')[2] ?? 'v1'],
      summary: route.summary,
      ...(s?.description ? { description: s.description } : {}),
      security: [{ apiKey: scopes }, { oauth2: scopes }],
      'x-required-scope': route.scope,
      'x-rate-limit-bucket': route.bucket,
      parameters: [
        ...parameters(route, s, schemas),
        ...(keyed ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ],
      ...(body ? { requestBody: body } : {}),
      responses: {
        ...successResponses(route, s, schemas),
        ...Object.fromEntries(errors.map((code) => [code, { $ref: `#/components/responses/${code}` }])),
      },
    };
  }
  const envelope = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Support Desk API',
      version: '1.0.0',
      description:
        'Help-desk API. Authenticate with `Authorization: Bearer <API key or OAuth access token>`. ' +
        'Every response is `{success, data}` or `{success: false, error: {code, message}}`. ' +
        'HEAD is served wherever GET is (same status and headers, no body; counted like GET). ' +
        'A path called with a method it does not have is `405 METHOD_NOT_ALLOWED` with `Allow`. ' +
        'POST and PATCH take an `Idempotency-Key` header: a retry with the same key gets the first answer again.',
    },
    servers: [{ url: serverUrl }],
    paths: { ...paths, ...oauthPaths() },
    components: {
      schemas,
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([code, description]) => [
          code,
          {
            description,
            content: envelope,
            ...(code === '405'
              ? {
                  headers: { Allow: { description: 'The methods the path has', schema: { type: 'string' } } },
                }
              : {}),
            ...(code === '409'
              ? {
                  headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } },
                }
              : {}),
            ...(code === '429'
              ? {
                  headers: {
                    'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
                    ...Object.fromEntries(
                      Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]),
                    ),
                  },
                }
              : {}),
          },
        ]),
      ),
      headers: {
        ...Object.fromEntries(
          Object.entries(RATE_HEADERS).map(([h, description]) => [
            h,
            { description, schema: { type: h.startsWith('X-') ? 'integer' : 'string' } },
          ]),
        ),
        'Idempotent-Replayed': {
          description:
            '`true` when this is the stored answer to an earlier call with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'sd_<keyId>_<secret>',
          description: 'API key created by an administrator (scopes chosen at creation).',
        },
        oauth2: {
          type: 'oauth2',
          description: 'OAuth 2.0 authorization code flow; access tokens are ES256 JWTs.',
          flows: {
            authorizationCode: {
              authorizationUrl: `${serverUrl}/oauth/authorize`,
              tokenUrl: `${serverUrl}/oauth/token`,
              refreshUrl: `${serverUrl}/oauth/token`,
              scopes: Object.fromEntries(SCOPES.map((s) => [s, SCOPE_DESCRIPTIONS[s]])),
            },
          },
        },
      },
    },
  };
}
