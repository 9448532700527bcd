import { AUTHENTICATED_SCIM_HEADER } from '@support-desk/contracts';
import {
  type HttpApp,
  isPrototypePoisoning,
  parseJsonBody,
  PROTOTYPE_KEYS_REFUSED,
} from '@support-desk/platform/http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { scimRequests } from '../metrics.js';
import type { Deps } from '../use-cases/deps.js';
import { authenticateScimToken, provisioningContext } from '../use-cases/identity-providers.js';
import { type ScimCall, SCIM_PREFIX, scimBaseUrl } from '../use-cases/scim/calls.js';
import { ScimError, scimErrorBody, toScimError } from '../use-cases/scim/errors.js';
import { scimDiscoveryRoutes, scimUnsupportedRoutes } from './scim-discovery.js';
import { scimResourceRoutes } from './scim-resources.js';

const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';
const SCIM_BODY_LIMIT = 1024 * 1024;

/** What the SCIM metric counts a call under: its resource and how it was answered. */
function scimOutcome(request: FastifyRequest, reply: FastifyReply) {
  const path = request.routeOptions.url ?? '';
  const resource = path.includes('/Users') ? 'users' : path.includes('/Groups') ? 'groups' : 'other';
  const status = reply.statusCode;
  const outcome = status < 400 ? 'ok' : status === 401 ? 'unauthorized' : status < 500 ? 'refused' : 'error';
  return { resource, outcome };
}

declare module 'fastify' {
  interface FastifyRequest {
    scim: ScimCall;
  }
}

function sendScimError(reply: FastifyReply, err: ScimError) {
  if (err.status === 401) reply.header('www-authenticate', 'Bearer realm="scim"');
  return reply.code(err.status).type(SCIM_CONTENT_TYPE).send(scimErrorBody(err));
}

/** Fastify's own refusals (a malformed body, 413, 415) and the use cases' errors, as SCIM errors. */
function scimErrorOf(error: FastifyError): ScimError {
  const known = toScimError(error);
  if (known) return known;
  if (isPrototypePoisoning(error)) return new ScimError(400, 'invalidSyntax', PROTOTYPE_KEYS_REFUSED);
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
    return new ScimError(400, 'invalidSyntax', 'body is not valid JSON');
  }
  const status = error.statusCode ?? 500;
  return status < 500
    ? new ScimError(status, null, error.message)
    : new ScimError(500, null, 'Internal server error');
}

/**
 * The SCIM 2.0 service provider (RFC 7643/7644) under /scim/v2: its own scope, with SCIM's media
 * type (`application/scim+json`, JSON accepted too), SCIM error bodies, and its own credential: the
 * bearer token of an identity provider connection, checked here on every call (the gateway
 * forwards the call as it came, with its forwarding assertion for the client's address).
 * Identity answers which connection authenticated (`x-sd-authenticated-scim`) so the gateway
 * counts the call against that connection's rate limit.
 */
export async function scimRoutes(app: HttpApp, deps: Deps): Promise<void> {
  const baseUrl = scimBaseUrl(deps.config);
  await app.register(
    async (scope: FastifyInstance) => {
      // The services' JSON parser: a key `__proto__`, or `constructor` with a `prototype` inside,
      // is refused before any SCIM code sees the body.
      scope.addContentTypeParser(
        ['application/scim+json'],
        { parseAs: 'string', bodyLimit: SCIM_BODY_LIMIT },
        (_request, body, done) => {
          if (body === '') return done(null, undefined);
          try {
            done(null, parseJsonBody(body as string));
          } catch (err) {
            done(
              new ScimError(
                400,
                'invalidSyntax',
                isPrototypePoisoning(err as Error) ? PROTOTYPE_KEYS_REFUSED : 'body is not valid JSON',
              ),
            );
          }
        },
      );
      // Every SCIM route is public to the principal guard: its credential is the connection token.
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config ?? {}), public: true } as typeof route.config;
      });
      scope.decorateRequest('scim', null as unknown as ScimCall);
      // Before the body is read or parsed: an unauthenticated caller costs no parsing at all.
      scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
        const auth = request.headers.authorization ?? '';
        const token = /^Bearer\s+(\S+)$/i.exec(auth)?.[1];
        const connection = token ? await authenticateScimToken(deps, token) : null;
        if (!connection) throw new ScimError(401, null, 'A valid SCIM bearer token is required');
        reply.header(AUTHENTICATED_SCIM_HEADER, connection._id);
        request.scim = {
          connection,
          at: { baseUrl },
          ctx: provisioningContext(connection, {
            requestId: request.id,
            userAgent: request.headers['user-agent'] ?? null,
            ipAddress: request.clientAddress,
          }),
        };
      });
      scope.addHook('onSend', async (_request, reply, payload) => {
        reply.type(SCIM_CONTENT_TYPE);
        return payload;
      });
      // An identity provider's pushes that fail (a revoked token, a refused change, an error here)
      // are its sync failing: counted for the ScimProvisioningFailing alert.
      scope.addHook('onResponse', async (request, reply) => {
        scimRequests.inc(scimOutcome(request, reply));
      });
      scope.setErrorHandler(async (error: FastifyError, request, reply) => {
        const scimError = scimErrorOf(error);
        if (scimError.status >= 500) request.log.error({ err: error }, 'SCIM call failed');
        return sendScimError(reply, scimError);
      });
      scope.setNotFoundHandler(async (request, reply) =>
        sendScimError(
          reply,
          new ScimError(404, null, `${request.method} ${request.url.split('?')[0]} is not a SCIM endpoint`),
        ),
      );
      scimDiscoveryRoutes(scope);
      scimResourceRoutes(scope, deps);
      scimUnsupportedRoutes(scope);
    },
    { prefix: SCIM_PREFIX },
  );
}
