import { errorResponses } from './openapi-errors.js';

type Json = Record<string, unknown>;

const AUTH_LIMITED = {
  code: 'RATE_LIMITED' as const,
  message: 'Rate limit exceeded for the auth bucket; retry after 12 s',
};

/** The OAuth 2.0 endpoints the gateway forwards to identity, as OpenAPI paths. */
export function oauthPaths(rateHeaders: Json): Json {
  const rateLimited = errorResponses([429], { response: null, errors: { 429: AUTH_LIMITED } }, rateHeaders);
  const tokenResponse = {
    type: 'object',
    required: ['access_token', 'token_type', 'expires_in'],
    properties: {
      access_token: { type: 'string' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', description: 'Access token lifetime in seconds' },
      refresh_token: { type: 'string' },
      scope: { type: 'string' },
    },
  };
  const form = (fields: string[]) => ({
    type: 'object',
    required: ['grant_type', 'client_id'],
    properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])),
  });
  return {
    '/oauth/authorize': {
      get: {
        operationId: 'oauthAuthorize',
        tags: ['OAuth'],
        summary: 'Start the authorization code flow (login and consent page)',
        security: [],
        parameters: ['client_id', 'redirect_uri', 'response_type', 'scope', 'state'].map((name) => ({
          name,
          in: 'query',
          required: name !== 'state',
          schema: name === 'response_type' ? { const: 'code' } : { type: 'string' },
        })),
        responses: {
          '200': {
            description: 'Login / consent page',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '302': { description: 'Redirect to redirect_uri with code (or error)' },
          ...rateLimited,
        },
      },
    },
    '/oauth/token': {
      post: {
        operationId: 'oauthToken',
        tags: ['OAuth'],
        summary: 'Exchange an authorization code or a refresh token for tokens',
        description: 'Rate limited per client and per client address (the auth bucket).',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                oneOf: [
                  form(['grant_type', 'code', 'client_id', 'client_secret', 'redirect_uri', 'code_verifier']),
                  form(['grant_type', 'refresh_token', 'client_id', 'client_secret']),
                ],
              },
            },
          },
        },
        responses: {
          '200': {
            description: 'Token response (not wrapped in the envelope)',
            content: { 'application/json': { schema: tokenResponse } },
          },
          '400': {
            description: 'OAuth error response',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          '401': {
            description: 'Client authentication failed',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          ...rateLimited,
        },
      },
    },
  };
}
