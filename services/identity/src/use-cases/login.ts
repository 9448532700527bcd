import { buildEvent, type EventContext, eventEntry, type OutboxEntry } from '@support-desk/platform';
import type { UserDoc } from '../store/index.js';
import type { Deps } from './deps.js';
import { randomSecret, sha256, verifyPassword } from './secrets.js';
import { findUserByEmail } from './users.js';

export type LoginResult =
  | { ok: true; user: UserDoc; sessionToken: string }
  | { ok: false; reason: 'throttled' | 'invalid' | 'inactive' | 'external' | 'no_password'; message: string };

const accountKey = (email: string) => `account:${email.trim().toLowerCase()}`;
const ipKey = (ip: string) => `ip:${ip}`;

const windowStartOf = (deps: Deps, now: Date) =>
  new Date(now.getTime() - deps.config.LOGIN_THROTTLE_WINDOW_SECONDS * 1000);

const failures = (deps: Deps, key: string, now: Date) =>
  deps.loginAttempts.failuresSince(key, windowStartOf(deps, now));

const recordFailure = (deps: Deps, key: string, now: Date) =>
  deps.loginAttempts.recordFailure(key, now, windowStartOf(deps, now));

/** Records a sign-in or sign-out event on the user (and the sign-in time, if given). */
async function recordOnUser(deps: Deps, userId: string, entry: OutboxEntry, lastLoginAt?: Date) {
  await deps.users.update(userId, () => ({
    write: { set: lastLoginAt ? { lastLoginAt } : {}, outbox: [entry] },
    result: undefined,
  }));
}

export function oauthContext(user: UserDoc, ip: string | null, userAgent: string | null, requestId: string) {
  const ctx: EventContext = {
    actor: { id: user._id, name: user.name, email: user.email, role: user.role },
    source: 'oauth',
    requestId,
    userAgent,
    ipAddress: ip,
  };
  return ctx;
}

/**
 * Password sign-in at the authorization server. Failed attempts are throttled per account and
 * per client IP (counters in MongoDB); the wrong-password answer never says whether the account
 * exists, and costs the same scrypt time either way.
 */
export async function login(
  deps: Deps,
  input: { email: string; password: string; ip: string; userAgent: string | null; requestId: string },
): Promise<LoginResult> {
  const now = deps.clock();
  const [acct, byIp] = await Promise.all([
    failures(deps, accountKey(input.email), now),
    failures(deps, ipKey(input.ip), now),
  ]);
  if (acct >= deps.config.LOGIN_MAX_FAILURES_PER_ACCOUNT || byIp >= deps.config.LOGIN_MAX_FAILURES_PER_IP) {
    const minutes = Math.ceil(deps.config.LOGIN_THROTTLE_WINDOW_SECONDS / 60);
    return {
      ok: false,
      reason: 'throttled',
      message: `Too many failed sign-in attempts. Try again in up to ${minutes} minute(s).`,
    };
  }
  const user = input.email.length <= 254 ? await findUserByEmail(deps, input.email, true) : null;
  if (user && user.identityProvider !== 'local') {
    return {
      ok: false,
      reason: 'external',
      message: `This account signs in through ${user.identityProvider}; password sign-in is not available for it.`,
    };
  }
  const valid = await verifyPassword(input.password.slice(0, 1024), user?.passwordHash);
  if (!user || !valid) {
    await Promise.all([
      recordFailure(deps, accountKey(input.email), now),
      recordFailure(deps, ipKey(input.ip), now),
    ]);
    if (user && !user.passwordHash) {
      return {
        ok: false,
        reason: 'no_password',
        message: 'Invalid email or password. (If no password was ever set, ask an administrator.)',
      };
    }
    return { ok: false, reason: 'invalid', message: 'Invalid email or password.' };
  }
  if (user.status !== 'active') {
    return { ok: false, reason: 'inactive', message: 'This account is deactivated and cannot sign in.' };
  }
  // Expired sessions and lapsed counters of everyone are purged by housekeeping.ts.
  await deps.loginAttempts.clear(accountKey(input.email));
  const token = randomSecret(32);
  await deps.sessions.insert({
    _id: sha256(token),
    userId: user._id,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.config.OAUTH_SESSION_TTL_SECONDS * 1000),
  });
  const ctx = oauthContext(user, input.ip, input.userAgent, input.requestId);
  const event = buildEvent('user.login', user._id, ctx, undefined, now);
  await recordOnUser(deps, user._id, eventEntry(deps.names, event), now);
  return { ok: true, user, sessionToken: token };
}

/** The signed-in, still active user of a session cookie, or null. */
export async function sessionUser(deps: Deps, token: string | undefined): Promise<UserDoc | null> {
  if (!token || token.length > 100) return null;
  const session = await deps.sessions.findById(sha256(token));
  if (!session || new Date(session.expiresAt).getTime() <= deps.clock().getTime()) return null;
  const user = await deps.users.findById(session.userId);
  return user?.status === 'active' ? user : null;
}

export async function logout(
  deps: Deps,
  token: string | undefined,
  meta: { ip: string | null; userAgent: string | null; requestId: string },
): Promise<boolean> {
  if (!token || token.length > 100) return false;
  const session = await deps.sessions.findById(sha256(token));
  if (!session) return false;
  if (!(await deps.sessions.remove(session._id))) return false;
  const user = await deps.users.findById(session.userId);
  if (!user) return true;
  const now = deps.clock();
  const event = buildEvent(
    'user.logout',
    user._id,
    oauthContext(user, meta.ip, meta.userAgent, meta.requestId),
    undefined,
    now,
  );
  await recordOnUser(deps, user._id, eventEntry(deps.names, event));
  return true;
}
