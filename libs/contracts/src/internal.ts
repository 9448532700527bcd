import { type Static, type TSchema, Type } from 'typebox';
import { RoleSchema, ScopeSchema } from './scopes.js';
import { StringEnum } from './schema.js';
import { PLANS } from './vocabulary.js';

/** Header that carries the gateway's signed principal assertion to the services. */
export const PRINCIPAL_HEADER = 'x-sd-principal';
/**
 * Header that carries the gateway's signed forwarding assertion on calls without a principal
 * (the OAuth pages and token endpoint): the client's address as the gateway saw it, bound to
 * the service and the call like the principal. A service trusts no `X-Forwarded-For`.
 */
export const FORWARDED_HEADER = 'x-sd-forwarded';
/**
 * Response header by which identity tells the gateway that a token-endpoint call was made by
 * an authenticated confidential client (its id): only then does the call count against that
 * client's budget. The gateway removes it before the response leaves.
 */
export const AUTHENTICATED_CLIENT_HEADER = 'x-sd-authenticated-client';
/**
 * Response header by which identity tells the gateway which identity provider connection a SCIM
 * call authenticated as (its name): only then does the call count against that connection's
 * budget. The gateway removes it before the response leaves.
 */
export const AUTHENTICATED_SCIM_HEADER = 'x-sd-authenticated-scim';
/** Headers that only the gateway may set; stripped from every client call. */
export const INTERNAL_HEADERS = [PRINCIPAL_HEADER, FORWARDED_HEADER] as const;

/** What the gateway asserts about an anonymous call it forwards. */
export interface ForwardedCall {
  clientIp: string | null;
  userAgent: string | null;
}

export { PLANS };
export type Plan = (typeof PLANS)[number];

/** Requests per minute; enterprise credentials carry their own. */
export const RateLimits = Type.Object(
  { general: Type.Integer({ minimum: 1 }), events: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export type RateLimits = Static<typeof RateLimits>;

export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, RateLimits> = {
  standard: { general: 60, events: 30 },
  professional: { general: 300, events: 120 },
};

/** The verified caller, as the gateway asserts it to the services. */
export const Principal = Type.Object(
  {
    userId: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    /** Effective scopes: credential scopes ∩ role scopes. */
    scopes: Type.Array(ScopeSchema),
    credential: Type.Object({
      type: Type.Union([Type.Literal('api_key'), Type.Literal('oauth')]),
      id: Type.String(),
    }),
    clientIp: Type.Union([Type.String(), Type.Null()]),
    userAgent: Type.Union([Type.String(), Type.Null()]),
    requestId: Type.String(),
  },
  { additionalProperties: false },
);
export type Principal = Static<typeof Principal>;

/** User as identity knows it, for read models and the gateway. */
export const UserSnapshot = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  role: RoleSchema,
  status: Type.Union([Type.Literal('active'), Type.Literal('inactive')]),
  isVip: Type.Boolean(),
  groups: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type UserSnapshot = Static<typeof UserSnapshot>;

export const GroupSnapshot = Type.Object({
  id: Type.String(),
  name: Type.String(),
  deleted: Type.Boolean(),
});
export type GroupSnapshot = Static<typeof GroupSnapshot>;

/** RPC `rpc.getUser` / `rpc.getGroup`: `{ id }` → `{ found: false }` or `{ found: true, user | group }`. */
type GetByIdRequest = { id: string };
type GetUserReply = { found: false } | { found: true; user: UserSnapshot };
type GetGroupReply = { found: false } | { found: true; group: GroupSnapshot };

/** RPC `rpc.resolveApiKey`: `{ key }` → resolution. The secret never travels back. */
type ResolveApiKeyRequest = { key: string };
export type ResolveApiKeyReply =
  | { valid: false; reason: 'unknown' | 'malformed' | 'revoked' | 'expired' | 'inactive_owner' }
  | {
      valid: true;
      keyId: string;
      owner: UserSnapshot;
      scopes: string[];
      plan: Plan;
      /** Set for enterprise keys; otherwise the plan's limits apply. */
      limits: RateLimits | null;
      allowlist: string[];
      globalAllowlist: string[];
      expiresAt: string | null;
    };

/** RPC `rpc.getOAuthClient`: `{ id }` (client_id) → plan and limits for rate limiting. */
export type GetOAuthClientReply =
  | { found: false }
  | { found: true; client: { clientId: string; name: string; plan: Plan; limits: RateLimits | null } };

/** RPC `rpc.getSettings`: `{}` → the settings other services act on. */
type SettingsReply = { globalAllowlist: string[] };

/**
 * Every request-reply operation identity serves: the name is its subject's key in
 * `natsNames(ns).rpc`, with the request it takes and the reply it gives. The one client
 * (`identityRpcClient`) and the one server (`serveIdentityRpc`) in platform are typed by it.
 */
export interface IdentityRpc {
  resolveApiKey: { request: ResolveApiKeyRequest; reply: ResolveApiKeyReply };
  getUser: { request: GetByIdRequest; reply: GetUserReply };
  getGroup: { request: GetByIdRequest; reply: GetGroupReply };
  getOAuthClient: { request: GetByIdRequest; reply: GetOAuthClientReply };
  getSettings: { request: Record<string, never>; reply: SettingsReply };
}
export type IdentityRpcName = keyof IdentityRpc;

/** A rate-limit pair as a reader checks it (extra fields ignored, unlike `RateLimits`). */
const ReplyLimits = Type.Union([
  Type.Object({ general: Type.Integer({ minimum: 1 }), events: Type.Integer({ minimum: 1 }) }),
  Type.Null(),
]);
const NotFound = Type.Object({ found: Type.Literal(false) });

/**
 * What a client of identity's RPC checks in each reply (a tolerant reader, as for events): the
 * fields callers read, with extra fields allowed, so a newer identity may add fields and a reply
 * that is not the shape at all is a clear error at the client (`RpcError`) rather than a crash
 * deeper in. A refusal reason is any string: a reason this release does not know is still a
 * refusal. The TypeScript types above are what identity writes.
 */
export const IDENTITY_RPC_REPLIES = {
  resolveApiKey: Type.Union([
    Type.Object({ valid: Type.Literal(false), reason: Type.String() }),
    Type.Object({
      valid: Type.Literal(true),
      keyId: Type.String(),
      owner: UserSnapshot,
      scopes: Type.Array(Type.String()),
      plan: StringEnum(PLANS),
      limits: ReplyLimits,
      allowlist: Type.Array(Type.String()),
      globalAllowlist: Type.Array(Type.String()),
      expiresAt: Type.Union([Type.String(), Type.Null()]),
    }),
  ]),
  getUser: Type.Union([NotFound, Type.Object({ found: Type.Literal(true), user: UserSnapshot })]),
  getGroup: Type.Union([NotFound, Type.Object({ found: Type.Literal(true), group: GroupSnapshot })]),
  getOAuthClient: Type.Union([
    NotFound,
    Type.Object({
      found: Type.Literal(true),
      client: Type.Object({
        clientId: Type.String(),
        name: Type.String(),
        plan: StringEnum(PLANS),
        limits: ReplyLimits,
      }),
    }),
  ]),
  getSettings: Type.Object({ globalAllowlist: Type.Array(Type.String()) }),
} satisfies Record<IdentityRpcName, TSchema>;

/**
 * Published on `credentialNotices` whenever a credential must stop working at once.
 * `keyId` is the API key id for `api_key_revoked`, and the OAuth grant id for
 * `oauth_grant_revoked` (access tokens carry it in their `gid` claim, so a gateway can refuse
 * the unexpired access tokens of a revoked grant). `userId` names the affected user.
 */
export const NOTICE_VERSION = 1;

const NOTICE_KINDS = [
  'api_key_revoked',
  'user_deactivated',
  'user_role_changed',
  'user_reactivated',
  'oauth_grant_revoked',
  'settings_changed',
] as const;

export const CredentialNotice = Type.Object({
  /** The notice contract's version (1 when absent: notices from before versions existed). */
  v: Type.Optional(Type.Integer({ minimum: 1 })),
  kind: StringEnum(NOTICE_KINDS),
  keyId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  at: Type.String({ format: 'date-time' }),
  /**
   * When every access token identity has issued so far (for this grant or user) has expired:
   * `at` plus identity's access-token lifetime. A gateway keeps its deny entry at least that
   * long, so a longer token lifetime can never outlive a revocation.
   */
  tokensExpireBy: Type.Optional(Type.String({ format: 'date-time' })),
});
export type CredentialNotice = Static<typeof CredentialNotice>;

/**
 * What a notice reader checks (a tolerant reader): a kind and a time, and the ids when present.
 * Unknown fields are ignored; a kind this release does not know is not an error (it has nothing
 * to drop for it), so a newer identity can add kinds without breaking older gateways.
 */
export const NoticeEnvelope = Type.Object({
  v: Type.Optional(Type.Integer({ minimum: 1 })),
  kind: Type.String({ minLength: 1, maxLength: 100 }),
  keyId: Type.Optional(Type.String()),
  userId: Type.Optional(Type.String()),
  at: Type.String({ format: 'date-time' }),
  tokensExpireBy: Type.Optional(Type.String({ format: 'date-time' })),
});

export const isNoticeKind = (kind: string): kind is CredentialNotice['kind'] =>
  (NOTICE_KINDS as readonly string[]).includes(kind);

/** A dead letter as an operator sees it (`deskctl dead-letters`). */
export interface DeadLetterSummary {
  id: string;
  consumer: string;
  subject: string;
  streamSequence: number;
  deliveryCount: number;
  reason: string;
  failedAt: string;
}

/**
 * Operator requests to a service about its dead letters (`<ns>.admin.deadletters.<service>`),
 * answered in the RPC envelope: `list` (newest first, `skip` then `limit`) → `{total, deadLetters}`; `show` →
 * `{found, deadLetter: summary + data}`; `replay` (ids, or all) → `{replayed, failed}`. A replay
 * hands the message to the service's own handler again; what it stores is keyed as on first
 * delivery, so a replayed message lands once.
 */
export type DeadLetterRequest =
  | { op: 'list'; limit?: number; skip?: number }
  | { op: 'show'; id: string }
  | { op: 'replay'; ids?: string[]; all?: boolean };

export interface DeadLetterReplies {
  list: { total: number; deadLetters: DeadLetterSummary[] };
  show: { found: false } | { found: true; deadLetter: DeadLetterSummary & { data: string } };
  replay: { replayed: string[]; failed: { id: string; reason: string }[] };
}
