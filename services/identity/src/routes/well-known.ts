import { SCOPES } from '@support-desk/contracts';
import type { HttpApp } from '@support-desk/platform/http';
import type { Deps } from '../use-cases/deps.js';
import type { Keyring } from '../oauth/keys.js';

/** RFC 8414 metadata and the JWKS the gateway verifies access tokens with. */
export function wellKnownRoutes(app: HttpApp, deps: Deps, keyring: Keyring): void {
  const iss = deps.config.OAUTH_ISSUER;
  const metadata = {
    issuer: iss,
    authorization_endpoint: `${iss}/oauth/authorize`,
    token_endpoint: `${iss}/oauth/token`,
    revocation_endpoint: `${iss}/oauth/revoke`,
    jwks_uri: `${iss}/.well-known/jwks.json`,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  };
  app.get('/.well-known/oauth-authorization-server', { config: { public: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').send(metadata),
  );
  app.get('/.well-known/jwks.json', { config: { public: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=60').send(await keyring.jwks()),
  );
}
