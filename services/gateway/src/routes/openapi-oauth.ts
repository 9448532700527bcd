import { errorResponses } from './openapi-errors.js';

type Json = Record<string, unknown>;

const AUTH_LIMITED = {
  code: 'RATE_LIMITED' as const,
  message: 'Rate limit exceeded for the auth bucket; retry after 12 s',
};

/** An answer that is a page for the browser (login, consent, error). */
const htmlPage = (description: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' }, example: '<!doctype html>…' } },
});

/**
 * A page's 400: the error page, or the envelope where the input never reached the page (a path
 * or query the gateway refuses as malformed, a NUL character the platform refuses).
 */
const refusedPage = (description: string) => {
  const page = htmlPage(`${description}; the error envelope (JSON) for malformed input`);
  const envelope = errorResponses([400], undefined, {})['400'] as { content: Record<string, unknown> };
  return { ...page, content: { ...page.content, ...envelope.content } };
};

/** The OAuth 2.0 endpoints the gateway forwards to identity, as OpenAPI paths. */
export function oauthPaths(rateHeaders: Json): Json {
  // The gateway's own answers (the 431 of its HTTP server included), as on every operation.
  const rateLimited = errorResponses(
    [429, 431],
    { response: null, errors: { 429: AUTH_LIMITED } },
    rateHeaders,
  );
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
          schema: name === 'response_type' ? { const: 'code' } : { type: 'string', minLength: 1 },
        })),
        responses: {
          '200': htmlPage('Login / consent page'),
          '302': { description: 'Redirect to redirect_uri with code (or error)' },
          '400': refusedPage(
            'Error page: the client is unknown, or redirect_uri is not one registered for it ' +
              '(never redirected there: RFC 6749 §4.1.2.1)',
          ),
          ...rateLimited,
        },
      },
      post: {
        operationId: 'oauthAuthorizeDecision',
        tags: ['OAuth'],
        summary: "The consent page's answer: approve or deny, then back to the client",
        description:
          'A browser form, posted by the consent page `GET /oauth/authorize` shows, with the session ' +
          'cookie of the user who signed in and the CSRF token the page carries (its cookie and its ' +
          'field must agree, else 403). `request` is the authorization request as the page carries it ' +
          '(the query string of `GET /oauth/authorize`). Approved, the client is redirected (303) with ' +
          '`code`, `state` and `iss`; denied, with `error=access_denied`. Without a session the login ' +
          'page is shown (200). Counted per client address (the auth bucket).',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['request', 'csrf_token', 'decision'],
                properties: {
                  request: { type: 'string', description: 'The query string of the authorization request' },
                  csrf_token: { type: 'string', description: "The token of the page's form" },
                  decision: { enum: ['approve', 'deny'] },
                },
              },
              example: {
                request:
                  'response_type=code&client_id=cli_01j9zp3a1b2c3d4e5f6g7h8j9k&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback&scope=requests%3Aread&state=af0ifjsldkj&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256',
                csrf_token: 'k3Jx9QzV0bN7yT2mW5pL8rA1',
                decision: 'approve',
              },
            },
          },
        },
        responses: {
          '200': htmlPage('Login page (no session yet), or the consent page again'),
          '303': { description: 'Redirect to redirect_uri with code, state and iss (or an error)' },
          '400': refusedPage(
            'Error page: the request names an unknown client or a redirect_uri not registered for it',
          ),
          '403': htmlPage('Error page: the form expired or was not sent by this site (CSRF)'),
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
              example: {
                grant_type: 'authorization_code',
                code: 'SplxlOBeZQQYbYS6WxSbIA',
                client_id: 'cli_01j9zp3a1b2c3d4e5f6g7h8j9k',
                redirect_uri: 'https://app.example.com/callback',
                code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
              },
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
            content: {
              'application/json': {
                schema: tokenResponse,
                example: {
                  access_token: 'eyJhbGciOiJFUzI1NiIsInR5cCI6ImF0K2p3dCJ9…',
                  token_type: 'Bearer',
                  expires_in: 900,
                  refresh_token: 'rt_8xLOxBtZp8',
                  scope: 'requests:read requests:write',
                },
              },
            },
          },
          '400': {
            description: 'OAuth error response (RFC 6749 §5.2)',
            content: {
              'application/json': {
                schema: { type: 'object' },
                example: { error: 'invalid_grant', error_description: 'The code is invalid or expired' },
              },
            },
          },
          '401': {
            description: 'Client authentication failed',
            content: {
              'application/json': {
                schema: { type: 'object' },
                example: { error: 'invalid_client', error_description: 'Client authentication failed' },
              },
            },
          },
          ...rateLimited,
        },
      },
    },
  };
}
