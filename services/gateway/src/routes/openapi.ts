import {
  auditRouteSchemas,
  webhooksRouteSchemas,
  ErrorEnvelope,
  identityRouteSchemas,
  PUBLIC_ROUTES,
  type PublicRoute,
  ROUTE_EXAMPLES,
  type RouteExamples,
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
import { errorResponses, errorStatuses, servesEntityTag, takesIfMatch } from './openapi-errors.js';
import { oauthPaths } from './openapi-oauth.js';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Public base address (`{base_url}` without `/v1`), e.g. https://desk.example.com. */
  serverUrl: string;
  routes?: readonly PublicRoute[];
  schemaMaps?: RouteSchemaMap[];
  examples?: Record<string, RouteExamples>;
}

const RATE_HEADERS: Record<string, string> = {
  'X-RateLimit-Limit': 'Requests allowed in the window for this bucket',
  'X-RateLimit-Remaining': 'Requests left in the window',
  'X-RateLimit-Reset': 'Unix time (seconds) at which at least one more request is admitted',
  'RateLimit-Policy': 'IETF draft: "<bucket>";q=<limit>;w=<window seconds>',
  RateLimit:
    'IETF draft: "<bucket>";r=<remaining>;t=<seconds to reset> (1 to the window w; on a 429 equal to Retry-After)',
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

function requestBody(
  s: RouteSchemas | undefined,
  ex: RouteExamples | undefined,
  components: Json,
): Json | undefined {
  if (!s?.body && !s?.consumes) return undefined;
  const schema = s.body
    ? schemaTo(s.body, components)
    : {
        type: 'object',
        properties: { file: { type: 'string', format: 'binary', description: 'The file (one part)' } },
        required: ['file'],
        // Exactly one part: the service refuses any other field.
        additionalProperties: false,
      };
  const types = s.consumes ?? ['application/json'];
  const example = ex?.request === undefined ? {} : { example: ex.request };
  return { required: true, content: Object.fromEntries(types.map((t) => [t, { schema, ...example }])) };
}

const RATE_HEADER_REFS = Object.fromEntries(
  Object.keys(RATE_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]),
);

const CONDITIONAL_PARAMETERS = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'ETags you hold: 304 Not Modified (no body) while the representation is still one of them.',
    schema: { type: 'string' },
    example: '"7-Xq3vJ0c2kP1mR8sT"',
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The ETag you read (or the last PATCH answered): the write happens only if the resource is still at ' +
      'that revision, else 412 PRECONDITION_FAILED and nothing is written. `*` matches any revision. The ' +
      'comparison is strong (RFC 9110 §13.1.1): a weak tag (`W/"…"`) never matches, and the 412 says so.',
    schema: { type: 'string' },
    example: '"7-Xq3vJ0c2kP1mR8sT"',
  },
};

/**
 * The single read's 200 carries an ETag, and a 304 answers a matching If-None-Match; a PATCH's
 * 200 carries the ETag a read of the resource then gives.
 */
function withEntityTag(route: PublicRoute, responses: Json): Json {
  const read = servesEntityTag(route);
  if (!read && !(route.method === 'PATCH' && takesIfMatch(route))) return responses;
  const ok = responses['200'] as Json;
  const tagged = {
    ...ok,
    headers: { ...(ok.headers as Json | undefined), ETag: { $ref: '#/components/headers/ETag' } },
  };
  if (!read) return { ...responses, '200': tagged };
  return {
    ...responses,
    '200': tagged,
    '304': {
      description: 'Not Modified: the representation is still the one your If-None-Match names (no body)',
      headers: { ETag: { $ref: '#/components/headers/ETag' } },
    },
  };
}

/** POST and PATCH take an Idempotency-Key (the gateway's `routes/idempotency.ts`). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the call safe to retry: the first answer (status, body, Location) is kept for 24 h per ' +
    'credential and key, and a retry with the same key and the same request gets it again ' +
    '(`Idempotent-Replayed: true`) instead of running twice. The same request = the same method, path, ' +
    'query, media type and body; a JSON body is compared as parsed (RFC 8785 canonical form), so the same ' +
    'object serialised again with another key order or whitespace is the same request. The same key with a ' +
    'different request is 422; a retry while the first call runs is 409 with Retry-After; 5xx answers are not kept. ' +
    '1–255 printable ASCII characters (a UUID is a good key).',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  example: '5f0c6a4e-2b1d-4c53-9a57-0d3f8e1b7c21',
};
const KEYED_HEADER_REFS = {
  ...RATE_HEADER_REFS,
  'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' },
};

function successResponses(
  route: PublicRoute,
  s: RouteSchemas | undefined,
  ex: RouteExamples | undefined,
  components: Json,
): Json {
  const headers = takesIdempotencyKey(route.method) ? KEYED_HEADER_REFS : RATE_HEADER_REFS;
  const example = ex ? { example: ex.response } : {};
  if (!s) {
    const status = route.method === 'POST' ? '201' : '200';
    return {
      [status]: { description: route.summary, headers, content: { 'application/json': { schema: ANY_OK } } },
    };
  }
  const out: Json = {};
  for (const [status, schema] of Object.entries(s.response)) {
    if (Number(status) >= 400) continue; // errors: errorResponses
    // A produced type (a download, an NDJSON stream) is described by the route's own schema: a
    // binary string for a file, one line's schema for NDJSON.
    const content = Object.fromEntries(
      (s.produces ?? ['application/json']).map((t) => [
        t,
        { schema: schemaTo(schema, components), ...example },
      ]),
    );
    // A create names what it created (contractRoute sends it, the gateway makes it absolute).
    const created =
      s.location && status === '201' ? { Location: { $ref: '#/components/headers/Location' } } : {};
    out[status] = {
      description: s.description ?? route.summary,
      headers: { ...headers, ...created },
      content,
    };
  }
  return out;
}

/** The scope and bucket in words, for readers of the description (the extensions say it for tools). */
const accessNote = (route: PublicRoute) =>
  `**Scope:** ${route.scope === 'authenticated' ? 'any valid credential' : `\`${route.scope}\``} · ` +
  `**Rate bucket:** \`${route.bucket}\``;

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
  schemaMaps = [requestsRouteSchemas, identityRouteSchemas, auditRouteSchemas, webhooksRouteSchemas],
  examples = ROUTE_EXAMPLES,
}: OpenApiOptions): Json {
  const schemas: Json = {};
  schemas.ErrorEnvelope = schemaTo({ ...ErrorEnvelope, $id: undefined }, schemas);
  const merged: RouteSchemaMap = Object.assign({}, ...schemaMaps);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const s = merged[routeKey(route)];
    const ex = examples[routeKey(route)];
    const scopes = route.scope === 'authenticated' ? [] : [route.scope];
    const body = requestBody(s, ex, schemas);
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: operationId(route),
      tags: [route.path.split('/')[2] ?? 'v1'],
      summary: route.summary,
      description: [s?.description, accessNote(route)].filter(Boolean).join('\n\n'),
      security: [{ apiKey: scopes }, { oauth2: scopes }],
      'x-required-scope': route.scope,
      'x-rate-limit-bucket': route.bucket,
      parameters: [
        ...parameters(route, s, schemas),
        ...(servesEntityTag(route) ? [{ $ref: '#/components/parameters/IfNoneMatch' }] : []),
        ...(takesIfMatch(route) ? [{ $ref: '#/components/parameters/IfMatch' }] : []),
        ...(takesIdempotencyKey(route.method) ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ],
      ...(body ? { requestBody: body } : {}),
      responses: {
        ...withEntityTag(route, successResponses(route, s, ex, schemas)),
        ...errorResponses(errorStatuses(route, s, ex, Boolean(body)), ex, RATE_HEADER_REFS),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Support Desk API',
      version: '1.0.0',
      description:
        'Help-desk API. Authenticate with `Authorization: Bearer <API key or OAuth access token>` ' +
        '(in this reference: **Authorize**, then paste an API key under `apiKey`). ' +
        'Every response is `{success, data}` or `{success: false, error: {code, message, details?, requestId}}`. ' +
        'Each operation names the scope it needs (`x-required-scope`) and the rate-limit bucket it ' +
        'counts against (`x-rate-limit-bucket`). ' +
        'HEAD is served wherever GET is (same status and headers, no body; counted like GET). ' +
        'A path called with a method it does not have is `405 METHOD_NOT_ALLOWED` with `Allow`. ' +
        'POST and PATCH take an `Idempotency-Key` header: a retry with the same key gets the first answer again.',
    },
    servers: [{ url: serverUrl }],
    paths: { ...paths, ...oauthPaths(RATE_HEADER_REFS) },
    components: {
      schemas,
      headers: {
        ...Object.fromEntries(
          Object.entries(RATE_HEADERS).map(([h, description]) => [
            h,
            { description, schema: { type: h.startsWith('X-') ? 'integer' : 'string' } },
          ]),
        ),
        ETag: {
          description:
            'Strong tag of the representation a single read (GET) gives, `"<revision>-<fingerprint>"` (on a PATCH: ' +
            'the tag a read gives right after the change, so the next conditional write needs no read first): ' +
            'send it back in If-None-Match (304 while current) or If-Match (412 if the resource changed)',
          schema: { type: 'string' },
        },
        Location: {
          description:
            'The absolute URL of the resource this call created (a GET on it reads it); an Idempotency-Key ' +
            'replay carries it too',
          schema: { type: 'string', format: 'uri' },
        },
        'Idempotent-Replayed': {
          description:
            '`true` when this is the stored answer to an earlier call with the same Idempotency-Key',
          schema: { type: 'string', enum: ['true'] },
        },
      },
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER, ...CONDITIONAL_PARAMETERS },
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
