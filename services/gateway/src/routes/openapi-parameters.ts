import type { PublicRoute, RouteSchemas } from '@support-desk/contracts';
import { takesIdempotencyKey } from '../use-cases/idempotency.js';
import { pathParams } from '../use-cases/route-table.js';
import { servesEntityTag, takesIfMatch } from './openapi-errors.js';
import { type Json, schemaTo } from './openapi-schema.js';

/**
 * The headers a client may add, as components. None carries an `example`: Swagger UI fills a
 * parameter's input with its example and sends it, and a generator (Schemathesis) sends it with
 * every call, so an example key would make the next call with it a 422 for 24 h and an example
 * tag every write a 412. The descriptions show what a value looks like instead.
 */
export const HEADER_PARAMETERS: Record<string, Json> = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes the call safe to retry: the first answer (status, body, Location) is kept for 24 h per ' +
      'credential and key, and a retry with the same key and the same request gets it again ' +
      '(`Idempotent-Replayed: true`) instead of running twice. The same request = the same method, path, ' +
      'query, media type and body; a JSON body is compared as parsed (RFC 8785 canonical form), so the same ' +
      'object serialised again with another key order or whitespace is the same request. The same key with a ' +
      'different request is 422; a retry while the first call runs is 409 with Retry-After; 5xx answers are ' +
      'not kept. 1–255 printable ASCII characters: a new UUID per new call, e.g. ' +
      '`5f0c6a4e-2b1d-4c53-9a57-0d3f8e1b7c21`.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
  },
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description:
      'ETags you hold (from an earlier answer, e.g. `"7-Xq3vJ0c2kP1mR8sT"`): 304 Not Modified (no ' +
      'body) while the representation is still one of them.',
    schema: { type: 'string' },
  },
  IfMatch: {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      'The ETag you read or the last PATCH answered (e.g. `"7-Xq3vJ0c2kP1mR8sT"`): the write happens ' +
      'only if the resource is still at that revision, else 412 PRECONDITION_FAILED and nothing is ' +
      'written. `*` matches any revision. The comparison is strong (RFC 9110 §13.1.1): a weak tag ' +
      '(`W/"…"`) never matches, and the 412 says so.',
    schema: { type: 'string' },
  },
};

const headerRef = (name: keyof typeof HEADER_PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

/** One operation's parameters: path, then query (from the route's schemas), then headers. */
export function parameters(route: PublicRoute, s: RouteSchemas | undefined, components: Json): Json[] {
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
  if (servesEntityTag(route)) out.push(headerRef('IfNoneMatch'));
  if (takesIfMatch(route)) out.push(headerRef('IfMatch'));
  if (takesIdempotencyKey(route.method)) out.push(headerRef('IdempotencyKey'));
  return out;
}
