import { AUTHENTICATED_CLIENT_HEADER } from '@support-desk/contracts';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import { clientSecretMatches, findClient } from '../use-cases/oauth-clients.js';
import { OAuthError } from '../use-cases/oauth-errors.js';
import { redeemCode, refresh, revokeToken } from '../use-cases/token-grants.js';
import type { Keyring } from '../oauth/keys.js';
import { type FormBody, param, parseForm } from '../oauth/forms.js';
import type { OAuthClientDoc } from '../store/index.js';

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function oauthError(reply: FastifyReply, err: OAuthError, basic: boolean) {
  if (err.status === 401 && basic)
    reply.header('www-authenticate', 'Basic realm="support-desk", charset="UTF-8"');
  return reply
    .code(err.status)
    .headers(NO_STORE)
    .send({ error: err.error, error_description: err.description });
}

/** Single-valued form parameter, or invalid_request when repeated (RFC 6749 §3.2). */
function field(body: FormBody, name: string): string | undefined {
  const v = param(body, name);
  if (typeof v === 'object') throw new OAuthError('invalid_request', `${name} was sent more than once`);
  return v;
}

/**
 * Client authentication: HTTP Basic (client_secret_basic) or client_id + client_secret in the
 * body (client_secret_post); public clients send only client_id. Using both methods is refused.
 * A confidential client that authenticated is named to the gateway, which counts the call
 * against that client's budget (and only then: anyone can name a client).
 */
async function authenticateClient(
  deps: Deps,
  request: FastifyRequest,
  reply: FastifyReply,
  body: FormBody,
): Promise<OAuthClientDoc> {
  const header = request.headers.authorization;
  let id = field(body, 'client_id');
  let secret = field(body, 'client_secret');
  const basic = typeof header === 'string' && /^basic /i.test(header);
  if (basic) {
    if (secret !== undefined) throw new OAuthError('invalid_request', 'use one client authentication method');
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i < 0) throw new OAuthError('invalid_client', 'malformed Basic credentials', 401);
    try {
      const basicId = decodeURIComponent(decoded.slice(0, i).replace(/\+/g, ' '));
      if (id !== undefined && id !== basicId) throw new OAuthError('invalid_request', 'client_id mismatch');
      id = basicId;
      secret = decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, ' '));
    } catch (err) {
      if (err instanceof OAuthError) throw err;
      throw new OAuthError('invalid_client', 'malformed Basic credentials', 401);
    }
  }
  if (!id) throw new OAuthError('invalid_client', 'client authentication is required', 401);
  const client = await findClient(deps, id);
  if (!client) throw new OAuthError('invalid_client', 'client authentication failed', 401);
  if (client.isPublic) {
    if (secret !== undefined) throw new OAuthError('invalid_client', 'public clients have no secret', 401);
    return client;
  }
  if (!clientSecretMatches(client, secret))
    throw new OAuthError('invalid_client', 'client authentication failed', 401);
  reply.header(AUTHENTICATED_CLIENT_HEADER, client._id);
  return client;
}

/** `/oauth/token` and `/oauth/revoke`: form bodies in, RFC 6749 JSON out (not enveloped). */
export function oauthTokenRoutes(app: HttpApp, deps: Deps, keyring: Keyring): void {
  app.register(async (api) => {
    api.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_req, raw, done) => done(null, parseForm(String(raw))),
    );
    api.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (error instanceof OAuthError)
        return oauthError(reply, error, /^basic /i.test(request.headers.authorization ?? ''));
      if ((error.statusCode ?? 500) < 500) {
        const message =
          error.statusCode === 415
            ? 'the body must be application/x-www-form-urlencoded'
            : error.statusCode === 413
              ? 'the body is too large'
              : 'malformed request';
        return reply
          .code(400)
          .headers(NO_STORE)
          .send({ error: 'invalid_request', error_description: message });
      }
      request.log.error({ err: error }, 'oauth endpoint failed');
      return reply
        .code(500)
        .headers(NO_STORE)
        .send({ error: 'server_error', error_description: 'internal error' });
    });

    const formBody = (request: FastifyRequest): FormBody => {
      if (!request.headers['content-type']?.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
        throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
      }
      return (request.body ?? {}) as FormBody;
    };

    api.post('/oauth/token', { config: { public: true } }, async (request, reply) => {
      const body = formBody(request);
      const grantType = field(body, 'grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
        throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
      }
      const client = await authenticateClient(deps, request, reply, body);
      const tokens =
        grantType === 'authorization_code'
          ? await redeemCode(deps, keyring, client, {
              code: field(body, 'code'),
              redirectUri: field(body, 'redirect_uri'),
              codeVerifier: field(body, 'code_verifier'),
            })
          : await refresh(deps, keyring, client, {
              refreshToken: field(body, 'refresh_token'),
              scope: field(body, 'scope'),
            });
      return reply.code(200).headers(NO_STORE).send(tokens);
    });

    api.post('/oauth/revoke', { config: { public: true } }, async (request, reply) => {
      const body = formBody(request);
      const client = await authenticateClient(deps, request, reply, body);
      await revokeToken(deps, keyring, client, field(body, 'token'));
      return reply.code(200).headers(NO_STORE).send({});
    });
  });
}
