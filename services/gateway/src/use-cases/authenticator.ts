import {
  effectiveScopes,
  PLAN_LIMITS,
  type Plan,
  type Principal,
  type RateLimits,
  type Scope,
  type UserSnapshot,
} from '@support-desk/contracts';
import { AppError, forbidden } from '@support-desk/platform/core';
import type { DenyList } from '../store/deny-list.js';
import type { IdentityClient, OAuthClientInfo } from '../events/identity-client.js';
import { authentications } from '../metrics.js';
import type { IpAllowlist } from './ip-allowlist.js';
import { type AccessTokenClaims, InvalidTokenError, type TokenVerifier } from './token-verifier.js';

/** The verified caller before the per-call fields (ip, user agent, request id) are added. */
export interface Caller {
  principal: Omit<Principal, 'clientIp' | 'userAgent' | 'requestId'>;
  scopes: Scope[];
  /** Rate-limit subject: per API key, or per (OAuth client, user). */
  rateSubject: string;
  limits: RateLimits;
  /** The plan the limits come from (a metrics label). */
  plan: Plan;
}

const REALM = 'Bearer realm="support-desk"';

function unauthorized(message: string, invalidToken = true): AppError {
  return new AppError('UNAUTHORIZED', message, {
    'www-authenticate': invalidToken ? `${REALM}, error="invalid_token"` : REALM,
  });
}

type CredentialKind = 'api_key' | 'oauth' | 'none';

/** Counts a refusal by credential kind and reason (a fixed word), and returns the error to throw. */
function refuse(credential: CredentialKind, reason: string, error: AppError): AppError {
  authentications.inc({ credential, outcome: reason });
  return error;
}

const KEY_REFUSALS: Record<string, string> = {
  unknown: 'Unknown API key',
  malformed: 'Malformed API key',
  revoked: 'The API key has been revoked',
  expired: 'The API key has expired',
  inactive_owner: 'The API key belongs to an inactive user',
};

export interface AuthenticatorDeps {
  identity: IdentityClient;
  tokens: TokenVerifier;
  denyList: DenyList;
  allowlist: IpAllowlist;
  defaultPlan: Exclude<Plan, 'enterprise'>;
}

export function createAuthenticator({
  identity,
  tokens,
  denyList,
  allowlist,
  defaultPlan,
}: AuthenticatorDeps) {
  const limitsFor = (plan: Plan, custom: RateLimits | null): RateLimits =>
    plan === 'enterprise'
      ? (custom ?? PLAN_LIMITS[defaultPlan])
      : (PLAN_LIMITS[plan] ?? PLAN_LIMITS[defaultPlan]);

  // A caller is built once per cached resolution (or verified token + user + client): the same
  // object comes back while those are cached, so its principal's JSON is serialised only once.
  const keyCallers = new WeakMap<object, Caller>();
  const tokenCallers = new WeakMap<object, { user: object; client: object; caller: Caller }>();

  async function apiKey(raw: string, clientIp: string | undefined): Promise<Caller> {
    const r = await identity.resolveApiKey(raw);
    if (!r.valid) {
      const reason = r.reason in KEY_REFUSALS ? r.reason : 'invalid';
      throw refuse('api_key', reason, unauthorized(KEY_REFUSALS[r.reason] ?? 'Invalid API key'));
    }
    if (r.expiresAt && Date.parse(r.expiresAt) <= Date.now())
      throw refuse('api_key', 'expired', unauthorized(KEY_REFUSALS.expired));
    if (r.owner.status !== 'active')
      throw refuse('api_key', 'inactive_owner', unauthorized(KEY_REFUSALS.inactive_owner));
    if (!allowlist.allows(clientIp, r.globalAllowlist, r.allowlist)) {
      throw refuse(
        'api_key',
        'address_not_allowed',
        forbidden('Calls with this API key are not allowed from this address'),
      );
    }
    let caller = keyCallers.get(r);
    if (!caller) {
      caller = keyCaller(r);
      keyCallers.set(r, caller);
    }
    return caller;
  }

  function keyCaller(
    r: Extract<Awaited<ReturnType<IdentityClient['resolveApiKey']>>, { valid: true }>,
  ): Caller {
    const scopes = effectiveScopes(r.scopes, r.owner.role);
    return {
      principal: {
        userId: r.owner.id,
        email: r.owner.email,
        name: r.owner.name,
        role: r.owner.role,
        scopes,
        credential: { type: 'api_key', id: r.keyId },
      },
      scopes,
      rateSubject: `key:${r.keyId}`,
      limits: limitsFor(r.plan, r.limits),
      plan: r.plan,
    };
  }

  async function accessToken(token: string, clientIp: string | undefined): Promise<Caller> {
    let claims: AccessTokenClaims;
    try {
      claims = await tokens.verify(token);
    } catch (err) {
      if (err instanceof InvalidTokenError)
        throw refuse('oauth', 'invalid_token', unauthorized('Invalid or expired access token'));
      throw err;
    }
    const [denied, user, client, globalAllowlist] = await Promise.all([
      denyList.isDenied(claims.userId, claims.grantId),
      identity.getUser(claims.userId),
      identity.getOAuthClient(claims.clientId),
      identity.globalAllowlist(),
    ]);
    if (denied === 'grant')
      throw refuse('oauth', 'revoked', unauthorized('The access token has been revoked'));
    if (denied || !user || user.status !== 'active')
      throw refuse('oauth', 'inactive_user', unauthorized('The user is not active'));
    if (!client) throw refuse('oauth', 'unknown_client', unauthorized('Unknown OAuth client'));
    // The spec: when addresses are listed, only they may call the API, whatever the credential.
    if (!allowlist.allows(clientIp, globalAllowlist)) {
      throw refuse('oauth', 'address_not_allowed', forbidden('Calls are not allowed from this address'));
    }
    const known = tokenCallers.get(claims);
    if (known && known.user === user && known.client === client) return known.caller;
    const caller = tokenCaller(claims, user, client);
    tokenCallers.set(claims, { user, client, caller });
    return caller;
  }

  function tokenCaller(claims: AccessTokenClaims, user: UserSnapshot, client: OAuthClientInfo): Caller {
    const scopes = effectiveScopes(claims.scopes, user.role);
    return {
      principal: {
        userId: user.id,
        email: user.email,
        name: user.name,
        role: user.role,
        scopes,
        credential: { type: 'oauth', id: client.clientId },
      },
      scopes,
      rateSubject: `oauth:${client.clientId}:${user.id}`,
      limits: limitsFor(client.plan, client.limits),
      plan: client.plan,
    };
  }

  return {
    /** 401 (with WWW-Authenticate) for any missing or bad credential; 403 for a refused address. */
    async authenticate(authorization: string | undefined, clientIp: string | undefined): Promise<Caller> {
      if (!authorization)
        throw refuse('none', 'missing', unauthorized('Missing Authorization header', false));
      const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
      if (!match)
        throw refuse('none', 'not_bearer', unauthorized('Authorization must use the Bearer scheme', false));
      const credential = match[1];
      let kind: CredentialKind;
      let caller: Caller;
      if (credential.startsWith('sd_')) {
        kind = 'api_key';
        caller = await apiKey(credential, clientIp);
      } else if (credential.split('.').length === 3) {
        kind = 'oauth';
        caller = await accessToken(credential, clientIp);
      } else throw refuse('none', 'unrecognised', unauthorized('Invalid credentials'));
      authentications.inc({ credential: kind, outcome: 'ok' });
      return caller;
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;
