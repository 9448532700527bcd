import { PUBLIC_ROUTES, type RouteSchemaMap, type RouteSchemas, routeKey } from '@support-desk/contracts';
import type { Static, TSchema } from 'typebox';
import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { HttpApp } from './http.js';
import { ok } from './http.js';
import { entityTag, entityTagOf, holdsCurrent, revisionOf } from './entity-tags.js';
import { requireScope } from './principal-guard.js';

type StaticOf<S> = S extends TSchema ? Static<S> : unknown;

/** The request a contract route's handler sees: params, query and body typed by its schemas. */
export type ContractRequest<S extends RouteSchemas> = FastifyRequest<{
  Params: StaticOf<S['params']>;
  Querystring: StaticOf<S['querystring']>;
  Body: StaticOf<S['body']>;
}>;

type SuccessStatus<S extends RouteSchemas> = Extract<keyof S['response'], 200 | 201 | 202>;
type SuccessBody<S extends RouteSchemas> = StaticOf<S['response'][SuccessStatus<S>]>;
/** What a handler returns: the `data` of the success envelope (the helper wraps it). */
export type ContractResult<S extends RouteSchemas> =
  SuccessBody<S> extends { success: true; data: infer D } ? D : SuccessBody<S>;

export type ContractHandler<S extends RouteSchemas> = (
  request: ContractRequest<S>,
  reply: FastifyReply,
) => Promise<ContractResult<S> | FastifyReply>;

/**
 * Registers one public route from the contract: method and path from its key, its schemas from
 * the service's route schema map (the very schemas the OpenAPI document shows), and its scope
 * from `PUBLIC_ROUTES`, enforced once here before validation (a caller without the scope learns
 * nothing from a 400). The handler returns the data; it is sent in the success envelope with the
 * route's documented success status, and, for a route that creates a resource (`location` in its
 * schemas), with `Location` naming it (a path: the gateway, which knows the public origin, makes
 * it absolute). A handler that streams its own answer returns the reply.
 */
export function contractRoute<M extends RouteSchemaMap, K extends keyof M & string>(
  app: HttpApp,
  schemas: M,
  key: K,
  handler: ContractHandler<M[K]>,
  options: Pick<RouteShorthandOptions, 'config' | 'bodyLimit'> = {},
): void {
  const route = PUBLIC_ROUTES.find((r) => routeKey(r) === key);
  if (!route) throw new Error(`${key} is not in PUBLIC_ROUTES`);
  const s: RouteSchemas = schemas[key];
  const success = Object.keys(s.response)
    .map(Number)
    .filter((status) => status >= 200 && status < 300);
  const status = success[0] ?? 200;
  const scope = route.scope;
  // The created resource's path (`Location`), its id taken from the answer.
  const [locationHead, locationTail] = (s.location ?? '').split(':id');
  app.route({
    ...options,
    // An upload's assertion is bound by a one-time id (see body-binding.ts).
    ...(route.stream ? { config: { ...options.config, streamedBody: true } } : {}),
    method: route.method,
    url: route.path,
    schema: {
      ...(s.params ? { params: s.params } : {}),
      ...(s.querystring ? { querystring: s.querystring } : {}),
      ...(s.body ? { body: s.body } : {}),
      // Only JSON success answers are serialized by schema (errors are the platform's envelope);
      // a route that produces another content type (a download) sends its own bytes.
      ...(s.produces
        ? {}
        : { response: Object.fromEntries(success.map((code) => [code, s.response[code]])) }),
    },
    preValidation: async (request: FastifyRequest) => {
      if (scope !== 'authenticated') requireScope(request, scope);
    },
    handler: async (request, reply) => {
      const data = await handler(request as unknown as ContractRequest<M[K]>, reply);
      if (data === reply) return reply;
      // A single read marked with its revision gets an ETag, and a 304 when the client holds it;
      // a write marked with the tag a read now gives answers it (see `withEntityTag`).
      const revision = revisionOf(data);
      if (revision !== undefined) {
        const tag = entityTag(revision, data);
        reply.header('etag', tag);
        if (holdsCurrent(request.headers['if-none-match'], tag)) return reply.code(304).send();
      } else {
        const tag = entityTagOf(data);
        if (tag !== undefined) reply.header('etag', tag);
      }
      if (locationTail !== undefined) {
        const id = (data as { id?: unknown }).id;
        if (typeof id === 'string')
          reply.header('location', locationHead + encodeURIComponent(id) + locationTail);
      }
      return reply.code(status).send(ok(data));
    },
  });
}
