import type { DomainEvent } from '@support-desk/contracts';
import {
  addressKey,
  buildEvent,
  type EventContext,
  eventEntry,
  isAppError,
  withSnapshot,
} from '@support-desk/platform/core';
import type { FailureCount, UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { hashPassword, randomSecret, sha256, verifyPassword } from './secrets.js';
import { logins } from '../metrics.js';
import { userEventSnapshot } from './views.js';

export type LoginResult =
  | { ok: true; user: UserDoc; sessionToken: string }
  | { ok: false; reason: 'throttled'; message: string; retryAfterSeconds: number }
  | { ok: false; reason: 'invalid' | 'inactive'; message: string };

/** One account tried from one address (an IPv6 /64): the unit a wrong password slows down. */
const pairKey = (email: string, address: string) => `pair:${address}|${email.trim().toLowerCase()}`;
/** One address across every account: credential stuffing. */
const addressOnlyKey = (address: string) => `ip:${address}`;

const windowStartOf = (deps: Deps, now: Date) =>
  new Date(now.getTime() - deps.config.LOGIN_THROTTLE_WINDOW_SECONDS * 1000);

const failures = (deps: Deps, key: string, now: Date) =>
  deps.loginAttempts.failuresSince(key, windowStartOf(deps, now));

const recordFailure = (deps: Deps, key: string, now: Date, current: FailureCount) =>
  deps.loginAttempts.recordFailure(key, now, current);

/**
 * Seconds this account must still wait from this address: none for the first
 * LOGIN_FAILURES_BEFORE_BACKOFF failures, then LOGIN_BACKOFF_SECONDS after the latest failure,
 * doubling with each further one, never more than the window.
 */
function pairWait(deps: Deps, count: FailureCount, now: Date): number {
  const { LOGIN_FAILURES_BEFORE_BACKOFF: free, LOGIN_BACKOFF_SECONDS: base } = deps.config;
  if (count.failures < free || !count.lastFailureAt) return 0;
  const backoff = Math.min(base * 2 ** (count.failures - free), deps.config.LOGIN_THROTTLE_WINDOW_SECONDS);
  return backoff - (now.getTime() - new Date(count.lastFailureAt).getTime()) / 1000;
}

/** Seconds this address must still wait: to the end of its window once it spent its failures. */
function addressWait(deps: Deps, count: FailureCount, now: Date): number {
  if (count.failures < deps.config.LOGIN_MAX_FAILURES_PER_IP || !count.windowStart) return 0;
  const end = new Date(count.windowStart).getTime() + deps.config.LOGIN_THROTTLE_WINDOW_SECONDS * 1000;
  return (end - now.getTime()) / 1000;
}

/**
 * Records a sign-in or sign-out event on the user (and whatever else changes with it); the event
 * is made from the user as the write reads it, and carries the user as the write leaves it.
 */
async function recordOnUser(
  deps: Deps,
  userId: string,
  event: (user: UserDoc) => DomainEvent,
  set: Partial<UserDoc> = {},
  current?: UserDoc,
) {
  await deps.users.update(
    userId,
    async (user) => {
      const announced = withSnapshot(event(user), await userEventSnapshot(deps, { ...user, ...set }));
      return { write: { set, outbox: [eventEntry(deps.names, announced)] }, result: undefined };
    },
    current,
  );
}

/** Who did it from a browser: the signed-in user, from the request's address (`oauth` or `console`). */
export function oauthContext(
  user: UserDoc,
  ip: string | null,
  userAgent: string | null,
  requestId: string,
  source: 'oauth' | 'console' = 'oauth',
) {
  const ctx: EventContext = {
    actor: { id: user._id, name: user.name, email: user.email, role: user.role },
    source,
    requestId,
    userAgent,
    ipAddress: ip,
  };
  return ctx;
}

const INVALID = 'Invalid email or password.';

/**
 * Password sign-in at the authorization server.
 *
 * Throttling never locks the owner out: failures slow down one account from one address (with
 * backoff), so the right password from another address still signs in, and one address that
 * fails across many accounts waits out the window. The address is the client's as the gateway
 * signed it (an IPv6 /64 counts as one).
 *
 * No enumeration: an unknown email, an account that signs in through an identity provider, one
 * with no password and a wrong password all answer the same, after the same password check (a
 * dummy hash stands in). Only the right password learns that an account is deactivated.
 */
export async function login(deps: Deps, input: LoginInput): Promise<LoginResult> {
  const result = await attemptLogin(deps, input);
  logins.inc({ outcome: result.ok ? 'ok' : result.reason });
  return result;
}

type LoginInput = {
  email: string;
  password: string;
  ip: string;
  userAgent: string | null;
  requestId: string;
};

async function attemptLogin(deps: Deps, input: LoginInput): Promise<LoginResult> {
  const now = deps.clock();
  const address = addressKey(input.ip);
  const keys = [pairKey(input.email, address), addressOnlyKey(address)];
  const [pair, byAddress] = await Promise.all(keys.map((key) => failures(deps, key, now)));
  const wait = Math.ceil(Math.max(pairWait(deps, pair, now), addressWait(deps, byAddress, now)));
  if (wait > 0) {
    return {
      ok: false,
      reason: 'throttled',
      retryAfterSeconds: wait,
      message: `Too many failed sign-in attempts. Try again in ${wait} second(s).`,
    };
  }
  // Read ready for the sign-in's write (with its outbox): that write decides on this copy.
  const found =
    input.email.length <= 254
      ? await deps.users.findByEmail(input.email, { withPassword: true, forUpdate: true })
      : null;
  const user = found?.identityProvider === 'local' ? found : null;
  const check = await verifyPassword(input.password.slice(0, 1024), user?.passwordHash ?? null);
  if (!user || !check.valid) {
    await Promise.all([
      recordFailure(deps, keys[0], now, pair),
      recordFailure(deps, keys[1], now, byAddress),
    ]);
    return { ok: false, reason: 'invalid', message: INVALID };
  }
  if (user.status !== 'active') {
    return { ok: false, reason: 'inactive', message: 'This account is deactivated and cannot sign in.' };
  }
  const token = randomSecret(32);
  const ctx = oauthContext(user, input.ip, input.userAgent, input.requestId);
  const event = buildEvent('user.login', user._id, ctx, undefined, now);
  // A hash made with older parameters is replaced now, while the password is at hand.
  const rehashed = check.needsRehash ? { passwordHash: await hashPassword(input.password) } : {};
  // Three independent writes, at once. Expired sessions and lapsed counters of everyone are
  // purged by housekeeping.ts.
  await Promise.all([
    deps.loginAttempts.clear(keys[0]),
    deps.sessions.insert({
      _id: sha256(token),
      userId: user._id,
      createdAt: now,
      expiresAt: new Date(now.getTime() + deps.config.OAUTH_SESSION_TTL_SECONDS * 1000),
    }),
    recordOnUser(deps, user._id, () => event, { lastLoginAt: now, ...rehashed }, user),
  ]);
  return { ok: true, user, sessionToken: token };
}

/**
 * What a form's CSRF token is bound to: the session's id (SHA-256 of its cookie, as stored), or
 * `signed-out` before sign-in. A token made for one session is refused in any other, and one
 * made before sign-in does not outlive it.
 */
export const sessionBinding = (token: string | undefined): string =>
  token && token.length <= 100 ? sha256(token) : 'signed-out';

/** The key the browser forms' CSRF tokens are made with: one per deployment, made once. */
export const formsKey = (deps: Deps): Promise<string> =>
  deps.deploymentSecrets.getOrCreate('browser-forms-csrf', () => randomSecret(32), deps.clock());

/** The signed-in, still active user of a session cookie, or null. */
export async function sessionUser(deps: Deps, token: string | undefined): Promise<UserDoc | null> {
  return (await signedIn(deps, token))?.user ?? null;
}

/** The session's still active user and when they signed in (the console times out sooner), or null. */
export async function signedIn(
  deps: Deps,
  token: string | undefined,
): Promise<{ user: UserDoc; since: Date } | null> {
  if (!token || token.length > 100) return null;
  const session = await deps.sessions.findById(sha256(token));
  if (!session || new Date(session.expiresAt).getTime() <= deps.clock().getTime()) return null;
  const user = await deps.users.findById(session.userId);
  return user?.status === 'active' ? { user, since: new Date(session.createdAt) } : null;
}

/**
 * Re-authentication of a signed-in user (the console asks for the password again before it
 * creates an admin-scoped key). Throttled like a sign-in of that account from that address, and a
 * wrong password counts as a failed sign-in.
 */
export async function confirmPassword(
  deps: Deps,
  user: UserDoc,
  password: string,
  ip: string,
): Promise<{ ok: true } | { ok: false; message: string }> {
  const now = deps.clock();
  const key = pairKey(user.email, addressKey(ip));
  const count = await failures(deps, key, now);
  const wait = Math.ceil(pairWait(deps, count, now));
  if (wait > 0) return { ok: false, message: `Too many wrong passwords. Try again in ${wait} second(s).` };
  const withHash = await deps.users.findByEmail(user.email, { withPassword: true });
  const check = await verifyPassword(password.slice(0, 1024), withHash?.passwordHash ?? null);
  if (check.valid && withHash?._id === user._id) return { ok: true };
  await recordFailure(deps, key, now, count);
  return { ok: false, message: 'That password is not right.' };
}

export async function logout(
  deps: Deps,
  token: string | undefined,
  meta: { ip: string | null; userAgent: string | null; requestId: string },
): Promise<boolean> {
  if (!token || token.length > 100) return false;
  const session = await deps.sessions.remove(sha256(token));
  if (!session) return false;
  const now = deps.clock();
  const entry = (user: UserDoc) =>
    buildEvent(
      'user.logout',
      user._id,
      oauthContext(user, meta.ip, meta.userAgent, meta.requestId),
      undefined,
      now,
    );
  try {
    await recordOnUser(deps, session.userId, entry);
  } catch (err) {
    // The session's user no longer exists: the sign-out itself happened.
    if (!(isAppError(err) && err.code === 'NOT_FOUND')) throw err;
  }
  return true;
}
