import {
  ENTITY_TAGGED_PATHS,
  type ErrorExample,
  type PublicRoute,
  type RouteExamples,
  type RouteSchemas,
} from '@support-desk/contracts';
import { humanBytes } from '@support-desk/platform/core';
import { PUBLIC_MAX_HEADER_BYTES } from '@support-desk/platform/http';
import { takesIdempotencyKey } from '../use-cases/idempotency.js';
import { pathParams } from '../use-cases/route-table.js';

type Json = Record<string, unknown>;

/** What each status means for any route, with the example shown where a route has none of its own. */
const COMMON_ERRORS: Record<number, { description: string; example: ErrorExample }> = {
  400: {
    description:
      'VALIDATION_ERROR: the input is invalid (`details` lists every problem), or the path or query ' +
      'is malformed (a dot segment, an encoded slash, bad percent-encoding)',
    // Operations with input show their own (openapi-validation-example.ts); this is the gateway's.
    example: { code: 'VALIDATION_ERROR', message: 'The query string has malformed percent-encoding' },
  },
  401: {
    description: 'UNAUTHORIZED: missing, invalid, expired or revoked credential',
    example: { code: 'UNAUTHORIZED', message: 'Missing or invalid credentials' },
  },
  403: {
    description: 'FORBIDDEN: the credential lacks the scope, or the address is not allowed',
    example: { code: 'FORBIDDEN', message: 'This operation requires the requests:write scope' },
  },
  404: {
    description: 'NOT_FOUND: no such resource (or one the caller may not see)',
    example: { code: 'NOT_FOUND', message: 'Request not found' },
  },
  406: {
    description: 'NOT_ACCEPTABLE: the Accept header rules out every content type the operation produces',
    example: { code: 'NOT_ACCEPTABLE', message: 'This operation produces application/x-ndjson' },
  },
  409: {
    description:
      'CONFLICT: the change is not allowed in the current state, or a call with this Idempotency-Key is still running (see Retry-After)',
    example: { code: 'CONFLICT', message: 'The request was changed concurrently; retry' },
  },
  412: {
    description:
      'PRECONDITION_FAILED: the resource changed since the version `If-Match` names; nothing was written',
    example: {
      code: 'PRECONDITION_FAILED',
      message:
        'The request has changed since the version your If-Match names; read it again (GET) for its current ETag and retry',
    },
  },
  413: {
    description: 'PAYLOAD_TOO_LARGE: the body exceeds its limit (named in human units)',
    example: { code: 'PAYLOAD_TOO_LARGE', message: 'JSON bodies are limited to 1 MiB' },
  },
  415: {
    description: 'UNSUPPORTED_MEDIA_TYPE: the body is not in the documented content type',
    example: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' },
  },
  422: {
    description:
      'IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used for a different request (method, path, query or body)',
    example: {
      code: 'IDEMPOTENCY_KEY_REUSED',
      message:
        'This Idempotency-Key was already used for a different request (method, path, query or body); use a new key for a new request',
    },
  },
  429: {
    description:
      'RATE_LIMITED: the bucket named in the message is exhausted; or the credential already has as ' +
      'many calls in flight as it may (`CREDENTIAL_CONCURRENCY`, answered at once and not counted ' +
      'against the bucket); or, whatever the credential, the calling address failed authentication ' +
      'too often (every `/v1` call answered 401 counts, `AUTH_FAILURES_PER_IP` per window) and is ' +
      'refused until its window frees. See Retry-After',
    example: {
      code: 'RATE_LIMITED',
      message: 'Rate limit exceeded for the general bucket: 60 requests per 60 seconds; retry after 12 s',
    },
  },
  431: {
    description:
      `HEADERS_TOO_LARGE: the request line and headers together exceed ${humanBytes(PUBLIC_MAX_HEADER_BYTES)} ` +
      '(no parameter within its documented limits reaches it)',
    example: {
      code: 'HEADERS_TOO_LARGE',
      message: `The request line and headers exceed ${humanBytes(PUBLIC_MAX_HEADER_BYTES)}: send fewer or shorter query parameters and headers`,
    },
  },
  500: {
    description: 'SERVER_ERROR: internal error (the message carries an error id)',
    example: { code: 'SERVER_ERROR', message: 'Internal error (id 5f2c1e0a)' },
  },
  502: {
    description: 'SERVER_ERROR: the owning service is unreachable',
    example: { code: 'SERVER_ERROR', message: 'The requests service is unreachable' },
  },
  503: {
    description:
      'SERVICE_UNAVAILABLE: a dependency is unavailable, or the call was shed under load: too many lists, searches or exports running in the service, the service saturated, or the call out of time before it was done. Nothing was done; see Retry-After',
    example: { code: 'SERVICE_UNAVAILABLE', message: 'Rate limiting is unavailable; retry later' },
  },
  504: {
    description: 'SERVICE_UNAVAILABLE: the owning service did not answer in time',
    example: { code: 'SERVICE_UNAVAILABLE', message: 'The requests service did not answer in time' },
  },
};

/** The statuses every proxied route can answer, whatever its service does. */
const GATEWAY_ERRORS = [400, 401, 403, 429, 431, 500, 502, 503, 504];

/** The second 429 of a `/v1` route: the address that failed authentication too often. */
const AUTH_FAILURES_EXAMPLE: ErrorExample = {
  code: 'RATE_LIMITED',
  message: 'Too many failed authentications from this address; retry after 43 s',
};

const EXAMPLE_REQUEST_ID = '5b0e6f8c-3c1d-4f7a-9a52-0d9f3c2b7e41';

/** An error example as the client receives it: in the envelope, with the call's request id. */
const errorEnvelopeExample = (error: ErrorExample) => ({
  success: false,
  error: { ...error, requestId: EXAMPLE_REQUEST_ID },
});

/** PATCH and DELETE of a resource with ETags take If-Match. */
export const takesIfMatch = (route: PublicRoute) =>
  (route.method === 'PATCH' || route.method === 'DELETE') && ENTITY_TAGGED_PATHS.includes(route.path);

/** GET of a resource with ETags answers If-None-Match. */
export const servesEntityTag = (route: PublicRoute) =>
  route.method === 'GET' && ENTITY_TAGGED_PATHS.includes(route.path);

/**
 * The error statuses of one route: the gateway's own, 404 where the path names a resource, 413 and
 * 415 where there is a body, those its schema map declares and those its examples show.
 */
export function errorStatuses(
  route: PublicRoute,
  schemas: RouteSchemas | undefined,
  examples: RouteExamples | undefined,
  hasBody: boolean,
): number[] {
  const statuses = new Set(GATEWAY_ERRORS);
  if (pathParams(route.path).length > 0) statuses.add(404);
  if (hasBody) [413, 415].forEach((s) => statuses.add(s));
  if (takesIdempotencyKey(route.method)) [409, 422].forEach((s) => statuses.add(s));
  if (takesIfMatch(route)) statuses.add(412);
  for (const status of Object.keys(schemas?.response ?? {}).map(Number))
    if (status >= 400) statuses.add(status);
  for (const status of Object.keys(examples?.errors ?? {}).map(Number)) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

/** The error responses of one operation, each the ErrorEnvelope with an example. */
export function errorResponses(statuses: number[], examples: RouteExamples | undefined, headers: Json): Json {
  return Object.fromEntries(
    statuses.map((status) => {
      const common = COMMON_ERRORS[status];
      if (!common) throw new Error(`no description for error status ${status}`);
      const own = examples?.errors?.[status];
      const example = own ?? common.example;
      const shown =
        status === 429 && !own
          ? {
              examples: {
                bucket: { summary: 'A rate bucket is used up', value: errorEnvelopeExample(example) },
                authFailures: {
                  summary: 'The address failed authentication too often',
                  value: errorEnvelopeExample(AUTH_FAILURES_EXAMPLE),
                },
              },
            }
          : { example: errorEnvelopeExample(example) };
      return [
        String(status),
        {
          description: common.description,
          ...(status === 429 ? { headers: { 'Retry-After': RETRY_AFTER, ...headers } } : {}),
          ...(status === 503 ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
          ...(status === 409 ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
          content: {
            'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' }, ...shown },
          },
        },
      ];
    }),
  );
}

const RETRY_AFTER = { description: 'Seconds to wait before retrying', schema: { type: 'integer' } };
