import { createHash } from 'node:crypto';
import { expandScopes, newId, ROLE_SCOPES, SCOPES, type Scope } from '@support-desk/contracts';
import type { OAuthClientDoc, UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { findClient } from './oauth-clients.js';
import { randomSecret, sha256 } from './secrets.js';

/** A validated /oauth/authorize request. */
export interface AuthorizeRequest {
  client: OAuthClientDoc;
  redirectUri: string;
  scopes: Scope[];
  state: string | undefined;
  codeChallenge: string | null;
}

/** Errors that must not redirect: shown on an HTML page. */
export class AuthorizePageError extends Error {}

/** Errors reported to the (validated) redirect_uri. */
export class AuthorizeRedirectError extends Error {
  constructor(
    readonly redirectUri: string,
    readonly error: string,
    readonly description: string,
    readonly state: string | undefined,
  ) {
    super(description);
  }
}

const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

function single(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new AuthorizePageError(`The parameter ${name} was sent more than once.`);
  return all[0] === '' ? undefined : all[0];
}

/**
 * Validates the authorization request. Client and redirect_uri problems are never redirected
 * (the URI is matched exactly against the registered ones); everything after that is.
 */
export async function validateAuthorize(deps: Deps, query: string): Promise<AuthorizeRequest> {
  const params = new URLSearchParams(query);
  const clientId = single(params, 'client_id');
  const redirectUri = single(params, 'redirect_uri');
  if (!clientId) throw new AuthorizePageError('The client_id parameter is missing.');
  const client = await findClient(deps, clientId);
  if (!client) throw new AuthorizePageError('Unknown client_id.');
  if (!redirectUri) throw new AuthorizePageError('The redirect_uri parameter is missing.');
  if (!client.redirectUris.includes(redirectUri)) {
    throw new AuthorizePageError('The redirect_uri does not match any URI registered for this client.');
  }
  let state: string | undefined;
  const fail = (error: string, description: string): never => {
    throw new AuthorizeRedirectError(redirectUri, error, description, state);
  };
  try {
    state = single(params, 'state');
  } catch (err) {
    throw new AuthorizeRedirectError(redirectUri, 'invalid_request', (err as Error).message, undefined);
  }
  if (state && state.length > 2048) fail('invalid_request', 'state is too long');
  const get = (name: string) => {
    try {
      return single(params, name);
    } catch (err) {
      return fail('invalid_request', (err as Error).message);
    }
  };
  const responseType = get('response_type');
  if (!responseType) fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') fail('unsupported_response_type', 'only response_type=code is supported');
  const scopeParam = get('scope');
  if (!scopeParam)
    fail('invalid_scope', `scope is required (space-separated subset of: ${SCOPES.join(' ')})`);
  const requested = scopeParam!.split(' ').filter(Boolean);
  const unknown = requested.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (requested.length === 0 || unknown.length > 0)
    fail('invalid_scope', `unknown scope: ${unknown.join(' ')}`);
  const challenge = get('code_challenge');
  const method = get('code_challenge_method');
  if (method !== undefined && method !== 'S256') {
    fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  }
  if (challenge === undefined && method !== undefined) fail('invalid_request', 'code_challenge is missing');
  if (challenge !== undefined && method === undefined) {
    fail('invalid_request', 'code_challenge_method=S256 is required (plain is not supported)');
  }
  if (challenge !== undefined && !PKCE_VALUE.test(challenge))
    fail('invalid_request', 'malformed code_challenge');
  // OAuth 2.1 and RFC 9700 §2.1.1: every client, confidential ones too (code injection).
  if (challenge === undefined) {
    fail('invalid_request', 'PKCE (code_challenge with code_challenge_method=S256) is required');
  }
  return {
    client,
    redirectUri,
    scopes: [...new Set(requested)] as Scope[],
    state,
    codeChallenge: challenge ?? null,
  };
}

/** What the user can actually grant: requested ∩ what their role may do. */
export function grantableScopes(requested: Scope[], user: UserDoc): Scope[] {
  const allowed = new Set(expandScopes(ROLE_SCOPES[user.role]));
  return requested.filter((s) => allowed.has(s));
}

export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Stores a new grant and returns its single-use code `<grantId>.<secret>`. */
export async function issueCode(deps: Deps, req: AuthorizeRequest, user: UserDoc, scopes: Scope[]) {
  const now = deps.clock();
  const id = newId('oauthGrant', now.getTime());
  const secret = randomSecret(32);
  await deps.grants.insert({
    _id: id,
    clientId: req.client._id,
    userId: user._id,
    scopes,
    redirectUri: req.redirectUri,
    codeHash: sha256(secret),
    codeChallenge: req.codeChallenge,
    codeExpiresAt: new Date(now.getTime() + deps.config.OAUTH_CODE_TTL_SECONDS * 1000),
    codeUsedAt: null,
    refreshHash: null,
    usedRefreshHashes: [],
    refreshExpiresAt: null,
    revokedAt: null,
    revokedReason: null,
    createdAt: now,
  });
  return `${id}.${secret}`;
}

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
export { PKCE_VALUE };
