import {
  type CredentialNotice,
  newId,
  NOTICE_VERSION,
  type Plan,
  type RateLimits,
  type ResolveApiKeyReply,
  SCOPES,
} from '@support-desk/contracts';
import {
  buildEvent,
  conflict,
  type EventContext,
  eventEntry,
  messageEntry,
  notFound,
  validationError,
} from '@support-desk/platform/core';
import type { ApiKeyDoc, UserBrief } from '../store/index.js';
import type { Deps } from './deps.js';
import { parseAllowlist } from './ip-allowlist.js';
import { randomSecret, safeEqual, sha256 } from './secrets.js';
import { getSettings } from './settings.js';
import { findUserByEmail } from './user-lookups.js';
import { groupNames, toSnapshot } from './views.js';
import { apiKeysResolved } from '../metrics.js';

/** `sd_<keyId>_<43 base64url chars>`: the key id allows lookup, only the secret's hash is stored. */
const KEY_FORMAT = /^sd_(key_[0-9a-hjkmnp-tv-z]{26})_([A-Za-z0-9_-]{43})$/;

export interface CreateApiKeyInput {
  ownerEmail: string;
  name: string;
  scopes: string[];
  plan?: Plan;
  limits?: Partial<RateLimits>;
  allowlist?: string[];
  /** Lifetime in seconds; absent = no expiry. */
  expiresInSeconds?: number;
}

export interface ApiKeyView {
  id: string;
  name: string;
  owner: { id: string; email: string; name: string };
  scopes: string[];
  plan: Plan;
  limits: RateLimits | null;
  allowlist: string[];
  expiresAt: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

function toView(k: ApiKeyDoc, owner: UserBrief | undefined): ApiKeyView {
  return {
    id: k._id,
    name: k.name,
    owner: { id: k.ownerId, email: owner?.email ?? '', name: owner?.name ?? '' },
    scopes: k.scopes,
    plan: k.plan,
    limits: k.limits ?? null,
    allowlist: k.allowlist ?? [],
    expiresAt: iso(k.expiresAt),
    createdAt: iso(k.createdAt)!,
    lastUsedAt: iso(k.lastUsedAt),
    revokedAt: iso(k.revokedAt),
  };
}

/** Enterprise keys carry their own limits (defaulting to professional's); others use the plan's. */
export function resolveLimits(plan: Plan, given: Partial<RateLimits> | undefined, field: string) {
  if (plan !== 'enterprise') {
    if (given?.general !== undefined || given?.events !== undefined) {
      throw validationError(field, 'custom rate limits are only for the enterprise plan');
    }
    return null;
  }
  const limits = { general: given?.general ?? 300, events: given?.events ?? 120 };
  for (const [k, v] of Object.entries(limits)) {
    if (!Number.isInteger(v) || v < 1 || v > 1_000_000)
      throw validationError(field, `${k} must be 1..1000000`);
  }
  return limits;
}

export async function createApiKey(deps: Deps, ctx: EventContext, input: CreateApiKeyInput) {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw validationError('name', 'must be 1..100 characters');
  const unknown = input.scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (input.scopes.length === 0 || unknown.length > 0) {
    throw validationError('scopes', `must be a non-empty subset of ${SCOPES.join(', ')}`);
  }
  const plan = input.plan ?? 'standard';
  const limits = resolveLimits(plan, input.limits, 'limits');
  let allowlist: string[];
  try {
    allowlist = parseAllowlist(input.allowlist ?? []);
  } catch (err) {
    throw validationError('allowlist', (err as Error).message);
  }
  const owner = await findUserByEmail(deps, input.ownerEmail);
  if (!owner) throw notFound(`User ${input.ownerEmail}`);
  if (owner.status !== 'active') throw conflict(`${owner.email} is inactive`);
  const now = deps.clock();
  const id = newId('apiKey', now.getTime());
  const secret = randomSecret(32);
  const scopes = [...new Set(input.scopes)];
  const minimum = deps.config.API_KEY_MIN_LIFETIME_SECONDS;
  if (input.expiresInSeconds !== undefined && input.expiresInSeconds < minimum)
    throw validationError('expiresIn', `must be at least ${minimum} seconds`);
  const expiresAt = input.expiresInSeconds ? new Date(now.getTime() + input.expiresInSeconds * 1000) : null;
  // The event describes the key, never its value or hash.
  const event = buildEvent(
    'system.config_changed',
    id,
    ctx,
    {
      apiKey: {
        from: null,
        to: { id, name, ownerId: owner._id, scopes, plan, allowlist, expiresAt: iso(expiresAt) },
      },
    },
    now,
  );
  const key: ApiKeyDoc = {
    _id: id,
    ownerId: owner._id,
    name,
    secretHash: sha256(secret),
    scopes,
    plan,
    limits,
    allowlist,
    expiresAt,
    createdAt: now,
    createdBy: ctx.actor.id,
    lastUsedAt: null,
    revokedAt: null,
  };
  await deps.apiKeys.insert(key, [eventEntry(deps.names, event)]);
  return { ...toView(key, owner), key: `sd_${id}_${secret}` };
}

/** Which credentials a list shows: those that work, those that no longer do (revoked, expired), or all. */
export type CredentialStatus = 'active' | 'inactive' | 'all';
export const CREDENTIAL_STATUSES: readonly CredentialStatus[] = ['active', 'inactive', 'all'];

export interface ApiKeyListQuery {
  /** Only this user's keys (an unknown email is a 404). */
  ownerEmail?: string;
  status?: CredentialStatus;
  /** 1-based page of `limit` keys. */
  page: number;
  limit: number;
}

const worksAt = (k: Pick<ApiKeyDoc, 'revokedAt' | 'expiresAt'>, now: Date) =>
  !k.revokedAt && !(k.expiresAt && k.expiresAt <= now);

/**
 * A page of API keys, newest first, with how many match: all owners or one, by status (default
 * all). The keys are few enough to be filtered on the documents (FerretDB pushes none of these
 * conditions down); owners are read only for the page shown.
 */
export async function listApiKeys(
  deps: Deps,
  query: ApiKeyListQuery,
): Promise<{ keys: ApiKeyView[]; total: number }> {
  let ownerId: string | undefined;
  if (query.ownerEmail) {
    const owner = await findUserByEmail(deps, query.ownerEmail);
    if (!owner) throw notFound(`User ${query.ownerEmail}`);
    ownerId = owner._id;
  }
  const now = deps.clock();
  const status = query.status ?? 'all';
  const matching = (await deps.apiKeys.list(ownerId)).filter(
    (k) => status === 'all' || worksAt(k, now) === (status === 'active'),
  );
  const start = (query.page - 1) * query.limit;
  const keys = matching.slice(start, start + query.limit);
  const owners = await deps.users.briefs(keys.map((k) => k.ownerId));
  const byId = new Map(owners.map((o) => [o._id, o]));
  return { keys: keys.map((k) => toView(k, byId.get(k.ownerId))), total: matching.length };
}

/** One key as a list shows it, or null (its value is never shown again). */
export async function findApiKey(deps: Deps, id: string): Promise<ApiKeyView | null> {
  const key = await deps.apiKeys.findById(id);
  if (!key) return null;
  const [owner] = await deps.users.briefs([key.ownerId]);
  return toView(key, owner);
}

export async function revokeApiKey(deps: Deps, ctx: EventContext, id: string) {
  return deps.apiKeys.update(id, (key) => {
    if (key.revokedAt)
      return { write: null, result: { id, revokedAt: iso(key.revokedAt)!, alreadyRevoked: true } };
    const now = deps.clock();
    const event = buildEvent(
      'system.config_changed',
      id,
      ctx,
      { revokedAt: { from: null, to: now.toISOString() } },
      now,
    );
    const notice: CredentialNotice = {
      v: NOTICE_VERSION,
      kind: 'api_key_revoked',
      keyId: id,
      userId: key.ownerId,
      at: now.toISOString(),
    };
    return {
      write: {
        set: { revokedAt: now },
        outbox: [eventEntry(deps.names, event), messageEntry(deps.names.credentialNotices, notice)],
      },
      result: { id, revokedAt: now.toISOString(), alreadyRevoked: false },
    };
  });
}

const LAST_USED_GRANULARITY_MS = 60_000;

/** Gateway resolution of a presented key. Never returns the secret or its hash. */
export async function resolveApiKey(deps: Deps, presented: unknown): Promise<ResolveApiKeyReply> {
  const reply = await resolve(deps, presented);
  apiKeysResolved.inc({ outcome: reply.valid ? 'valid' : reply.reason });
  return reply;
}

async function resolve(deps: Deps, presented: unknown): Promise<ResolveApiKeyReply> {
  const match = typeof presented === 'string' ? KEY_FORMAT.exec(presented) : null;
  if (!match) return { valid: false, reason: 'malformed' };
  const [, keyId, secret] = match;
  const key = await deps.apiKeys.findWithSecretHash(keyId);
  // Compare even for unknown ids so timing does not reveal which ids exist.
  const matches = safeEqual(sha256(secret), key?.secretHash ?? sha256(''));
  if (!key || !matches) return { valid: false, reason: 'unknown' };
  if (key.revokedAt) return { valid: false, reason: 'revoked' };
  const now = deps.clock();
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= now.getTime())
    return { valid: false, reason: 'expired' };
  // The settings do not depend on the owner: both reads at once.
  const [owner, settings] = await Promise.all([deps.users.findById(key.ownerId), getSettings(deps)]);
  if (owner?.status !== 'active') return { valid: false, reason: 'inactive_owner' };
  if (!key.lastUsedAt || now.getTime() - new Date(key.lastUsedAt).getTime() >= LAST_USED_GRANULARITY_MS) {
    // At most one write per key per minute; a lost update is harmless.
    deps.apiKeys
      .markUsed(key._id, now)
      .catch((err) => deps.logger.warn({ err, keyId: key._id }, 'lastUsedAt update failed'));
  }
  const names = await groupNames(deps, owner.groups);
  return {
    valid: true,
    keyId: key._id,
    owner: toSnapshot(owner, names),
    scopes: key.scopes,
    plan: key.plan,
    limits: key.plan === 'enterprise' ? (key.limits ?? null) : null,
    allowlist: key.allowlist ?? [],
    globalAllowlist: settings.globalAllowlist,
    expiresAt: iso(key.expiresAt),
  };
}
