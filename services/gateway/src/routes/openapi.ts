import {
  ErrorEnvelope,
  PUBLIC_ROUTE_SCHEMAS,
  PUBLIC_ROUTES,
  type PublicRoute,
  ROUTE_EXAMPLES,
  type RouteExamples,
  type RouteSchemaMap,
  type RouteSchemas,
  routeKey,
  SCOPE_DESCRIPTIONS,
  SCOPES,
} from '@support-desk/contracts';
import { takesIdempotencyKey } from '../use-cases/idempotency.js';
import { openApiPath } from '../use-cases/route-table.js';
import { errorResponses, errorStatuses, servesEntityTag, takesIfMatch } from './openapi-errors.js';
import { oauthPaths } from './openapi-oauth.js';
import { HEADER_PARAMETERS, parameters } from './openapi-parameters.js';
import { type Json, schemaTo } from './openapi-schema.js';
import { validationExample } from './openapi-validation-example.js';

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
  // Descriptions are Markdown (Swagger UI would take `<bucket>` outside a code span for HTML).
  'RateLimit-Policy':
    'IETF draft: the bucket, its limit (`q`) and its window in seconds (`w`), e.g. `"general";q=60;w=60`',
  RateLimit:
    'IETF draft: the bucket, the requests remaining (`r`) and the seconds until the window resets (`t`: ' +
    '1 to the window `w`; on a 429 equal to Retry-After), e.g. `"general";r=59;t=12`',
};

const ANY_OK = {
  type: 'object',
  required: ['success', 'data'],
  properties: { success: { const: true }, data: {} },
};

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
        properties: {
          // An empty file is refused (400 body.file is empty): the schema says so.
          file: {
            type: 'string',
            format: 'binary',
            minLength: 1,
            description: 'The file (one part, not empty)',
          },
        },
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
  schemaMaps = [PUBLIC_ROUTE_SCHEMAS],
  examples = ROUTE_EXAMPLES,
}: OpenApiOptions): Json {
  const schemas: Json = {};
  schemas.ErrorEnvelope = schemaTo({ ...ErrorEnvelope, $id: undefined }, schemas);
  const merged: RouteSchemaMap = Object.assign({}, ...schemaMaps);
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const s = merged[routeKey(route)];
    const own = examples[routeKey(route)];
    const invalid = validationExample(s);
    const ex = own && invalid ? { ...own, errors: { 400: invalid, ...own.errors } } : own;
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
      parameters: parameters(route, s, schemas),
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
            'send it back in If-None-Match (304 while current) or If-Match (412 if the resource changed). ' +
            "It covers everything shown but a request's running SLA clocks' `remainingSeconds`, which count " +
            'down with time and follow from their `breachAt`',
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
      parameters: HEADER_PARAMETERS,
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
