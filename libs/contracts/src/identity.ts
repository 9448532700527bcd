import { type Static, Type } from 'typebox';
import { ErrorEnvelope, Ok } from './envelope.js';
import { IdSchema } from './ids.js';
import { CursorPageQuery, EnumListQuery, ListPagination, SearchQuery, SortQuery } from './pagination.js';
import type { RouteSchemaMap } from './routes.js';
import { DateTimeString, mapKeyPattern, StringEnum } from './schema.js';
import { ROLES, RoleSchema, ScopeSchema } from './scopes.js';
import { USER_STATUSES } from './vocabulary.js';

/** Documented input limits (README of services/identity). */
const IDENTITY_LIMITS = {
  email: 254,
  name: 200,
  search: 200,
  groupName: 100,
  groupDescription: 1000,
  groupsPerUser: 100,
  metadataKeys: 50,
  metadataKey: 64,
  metadataValue: 500,
  identityProvider: 64,
} as const;

export { USER_STATUSES };
const UserStatusSchema = StringEnum(USER_STATUSES);

const DateTimeOrNull = Type.Union([DateTimeString(), Type.Null()]);

export const GroupRef = Type.Object(
  { id: IdSchema('group'), name: Type.String() },
  { additionalProperties: false },
);
export type GroupRef = Static<typeof GroupRef>;

// Keys without dots or `$`: they become field names in the identity and audit stores, where a dot
// reads as a path (MongoDB) or is refused outright (FerretDB); never `__proto__`, `constructor` or
// `prototype` (RESERVED_KEYS).
// (A record's key schema becomes patternProperties, so the pattern carries the length and
// additionalProperties: false refuses every other key.)
const UserMetadata = Type.Record(
  Type.String({ pattern: mapKeyPattern(`[A-Za-z0-9_-]{1,${IDENTITY_LIMITS.metadataKey}}`) }),
  Type.String({ maxLength: IDENTITY_LIMITS.metadataValue }),
  { maxProperties: IDENTITY_LIMITS.metadataKeys, additionalProperties: false },
);

const Email = Type.String({ format: 'email', minLength: 3, maxLength: IDENTITY_LIMITS.email });
const DisplayName = Type.String({ minLength: 1, maxLength: IDENTITY_LIMITS.name, pattern: '\\S' });
const GroupIdList = Type.Array(IdSchema('group'), {
  maxItems: IDENTITY_LIMITS.groupsPerUser,
  uniqueItems: true,
});

/** The list columns of a user (GET /v1/users, group members). */
export const UserListItem = Type.Object(
  {
    id: IdSchema('user'),
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    status: UserStatusSchema,
    isVip: Type.Boolean(),
    groups: Type.Array(GroupRef),
    createdAt: DateTimeString(),
    lastLoginAt: DateTimeOrNull,
  },
  { additionalProperties: false },
);
export type UserListItem = Static<typeof UserListItem>;

/** The full user (GET /v1/users/:id). */
export const UserDetail = Type.Object(
  {
    ...UserListItem.properties,
    updatedAt: DateTimeString(),
    identityProvider: Type.String(),
    metadata: Type.Record(Type.String(), Type.String()),
    deactivatedAt: DateTimeOrNull,
    externalId: Type.Optional(
      Type.String({ description: "The identity provider's id of the user (provisioned users only)." }),
    ),
  },
  { additionalProperties: false },
);
export type UserDetail = Static<typeof UserDetail>;

const UserIdParams = Type.Object({ id: IdSchema('user') }, { additionalProperties: false });

/** The orders of the users and group members lists (`sort`); `-` prefix = descending. */
export const USER_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'email'] as const;
export const DEFAULT_USER_SORT = '-createdAt';

/** What the users list and the group members list share: enum filters, sort and paging. */
const userListParams = {
  role: Type.Optional(EnumListQuery(ROLES, 'Role')),
  status: Type.Optional(EnumListQuery(USER_STATUSES, 'Status')),
  sort: Type.Optional(
    SortQuery(
      USER_SORT_FIELDS,
      DEFAULT_USER_SORT,
      '`name` compares code points (upper case before lower case; no locale collation, which the ' +
        'local store lacks); `email` compares the lower-cased address.',
    ),
  ),
  ...CursorPageQuery,
};

export const UserListQuery = Type.Object(
  {
    ...userListParams,
    groupId: Type.Optional(IdSchema('group')),
    isVip: Type.Optional(Type.Boolean()),
    ...SearchQuery({
      maxLength: IDENTITY_LIMITS.search,
      description:
        'Search: users one of whose words (of the name or the email) starts with this text, ' +
        'case-insensitively: `ali` finds "Alice Smith" and bob@alicorp.test, `@corp` and ' +
        "`smith@corp` work too, `lice` does not (as Zendesk's and GitHub's user searches; plain " +
        `text, at most ${IDENTITY_LIMITS.search} characters; empty: no search).`,
    }),
  },
  { additionalProperties: false },
);
export type UserListQuery = Static<typeof UserListQuery>;

const UserList = Type.Object(
  { users: Type.Array(UserListItem), pagination: ListPagination },
  { additionalProperties: false },
);

export const CreateUserBody = Type.Object(
  {
    email: Email,
    name: DisplayName,
    role: RoleSchema,
    groups: Type.Optional(GroupIdList),
    isVip: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(UserMetadata),
    identityProvider: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: IDENTITY_LIMITS.identityProvider,
        pattern: '^[a-z0-9][a-z0-9_.-]*$',
        description: 'Set by provisioning; `local` (password login) when absent.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const CreatedUser = Type.Object(
  {
    id: IdSchema('user'),
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    status: UserStatusSchema,
    isVip: Type.Boolean(),
    groups: Type.Array(GroupRef),
    createdAt: DateTimeString(),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(DisplayName),
    role: Type.Optional(RoleSchema),
    groups: Type.Optional(GroupIdList),
    isVip: Type.Optional(Type.Boolean()),
    status: Type.Optional(UserStatusSchema),
    metadata: Type.Optional(UserMetadata),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;

/** `id`, the fields that changed (new values), `updatedAt`. */
export const UpdatedUser = Type.Object(
  {
    id: IdSchema('user'),
    name: Type.Optional(Type.String()),
    role: Type.Optional(RoleSchema),
    groups: Type.Optional(Type.Array(GroupRef)),
    isVip: Type.Optional(Type.Boolean()),
    status: Type.Optional(UserStatusSchema),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
    deactivatedAt: Type.Optional(DateTimeOrNull),
    updatedAt: DateTimeString(),
  },
  { additionalProperties: false },
);
export type UpdatedUser = Static<typeof UpdatedUser>;

export const DeactivatedUser = Type.Object(
  { id: IdSchema('user'), status: Type.Literal('inactive'), deactivatedAt: DateTimeString() },
  { additionalProperties: false },
);

export const Me = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    status: UserStatusSchema,
    isVip: Type.Boolean(),
    groups: Type.Array(GroupRef),
    /** The credential's effective scopes (same list as `scopes`). */
    permissions: Type.Array(ScopeSchema),
    scopes: Type.Array(ScopeSchema),
    credential: Type.Object(
      { type: StringEnum(['api_key', 'oauth'] as const), id: Type.String() },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type Me = Static<typeof Me>;

export const Group = Type.Object(
  {
    id: IdSchema('group'),
    name: Type.String(),
    description: Type.String(),
    memberCount: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type Group = Static<typeof Group>;

export const GroupDetail = Type.Object(
  {
    ...Group.properties,
    createdAt: DateTimeString(),
    updatedAt: DateTimeString(),
    identityProvider: Type.Optional(
      Type.String({
        description: 'The identity provider connection that owns the group (provisioned groups only).',
      }),
    ),
    externalId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);
export type GroupDetail = Static<typeof GroupDetail>;

const GroupIdParams = Type.Object({ id: IdSchema('group') }, { additionalProperties: false });
const GroupMemberParams = Type.Object(
  { id: IdSchema('group'), userId: IdSchema('user') },
  { additionalProperties: false },
);

const GroupName = Type.String({ minLength: 1, maxLength: IDENTITY_LIMITS.groupName, pattern: '\\S' });
const GroupDescription = Type.String({ maxLength: IDENTITY_LIMITS.groupDescription });

export const CreateGroupBody = Type.Object(
  { name: GroupName, description: Type.Optional(GroupDescription) },
  { additionalProperties: false },
);
export type CreateGroupBody = Static<typeof CreateGroupBody>;

export const UpdateGroupBody = Type.Object(
  { name: Type.Optional(GroupName), description: Type.Optional(GroupDescription) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateGroupBody = Static<typeof UpdateGroupBody>;

const AddMemberBody = Type.Object({ userId: IdSchema('user') }, { additionalProperties: false });

const LIST_PAGING =
  'Pages by `page` (with a total) or by `cursor` (no total, stable under concurrent inserts, no depth limit); the `Link` header (RFC 8288) carries the `next` and `prev` URIs. `role` and `status` take several values separated by commas.';

export const MembersQuery = Type.Object(userListParams, { additionalProperties: false });
export type MembersQuery = Static<typeof MembersQuery>;

const GroupMembership = Type.Object(
  {
    id: IdSchema('group'),
    name: Type.String(),
    memberCount: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const PROVIDER_OWNED_NOTE =
  'Users provisioned by an identity provider (SCIM, LDAP sync) keep `name`, `role`, `status` and `metadata` ' +
  "from it, and membership of provisioned groups is the provider's: changing them → 409 CONFLICT naming the provider.";

const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));

/** Public request/response schemas of the identity service, keyed by route (see PUBLIC_ROUTES). */
/** Why a users:write credential gets 403 on an admin (issue 30). */
const ADMIN_SCOPE_NOTE = 'users:write alone manages agents and viewers: 403 FORBIDDEN';

export const identityRouteSchemas = {
  'GET /v1/users': {
    description:
      'Newest first unless `sort` says otherwise. `q` (alias `search`): a word of the name or the email ' +
      'starts with it, case-insensitively (word-prefix search, as Zendesk and GitHub). ' +
      LIST_PAGING,
    querystring: UserListQuery,
    response: { 200: Ok(UserList), ...errors(400, 401, 403) },
  },
  'POST /v1/users': {
    description: `Creating an admin needs the admin scope (${ADMIN_SCOPE_NOTE}).`,
    body: CreateUserBody,
    location: '/v1/users/:id',
    response: { 201: Ok(CreatedUser), ...errors(400, 401, 403, 409) },
  },
  'GET /v1/users/:id': {
    params: UserIdParams,
    response: { 200: Ok(UserDetail), ...errors(400, 401, 403, 404) },
  },
  'PATCH /v1/users/:id': {
    description:
      '`groups` replaces the membership. The last active admin cannot be demoted or deactivated. ' +
      `Changing an admin, or a role to or from admin, needs the admin scope (${ADMIN_SCOPE_NOTE}). ` +
      PROVIDER_OWNED_NOTE,
    params: UserIdParams,
    body: UpdateUserBody,
    response: { 200: Ok(UpdatedUser), ...errors(400, 401, 403, 404, 409) },
  },
  'DELETE /v1/users/:id': {
    description:
      'Deactivates the user; their API keys and tokens stop working. The user is not removed: ' +
      '`GET /v1/users/{id}` keeps answering 200 with `status: inactive` and `deactivatedAt` (their ' +
      'requests, comments and audit history keep naming them), lists show them unless filtered with ' +
      '`status=active`, and `PATCH` with `{"status": "active"}` reactivates them. Deleting an inactive ' +
      'user again answers 200 with the same body. A user provisioned by an identity provider is ' +
      'deactivated there: 409 CONFLICT naming the provider. ' +
      `Deactivating an admin needs the admin scope (${ADMIN_SCOPE_NOTE}).`,
    params: UserIdParams,
    response: { 200: Ok(DeactivatedUser), ...errors(400, 401, 403, 404, 409) },
  },
  'GET /v1/me': {
    response: { 200: Ok(Me), ...errors(401) },
  },
  'GET /v1/groups': {
    response: {
      200: Ok(Type.Object({ groups: Type.Array(Group) }, { additionalProperties: false })),
      ...errors(401, 403),
    },
  },
  'POST /v1/groups': {
    body: CreateGroupBody,
    location: '/v1/groups/:id',
    response: { 201: Ok(GroupDetail), ...errors(400, 401, 403, 409) },
  },
  'GET /v1/groups/:id': {
    params: GroupIdParams,
    response: { 200: Ok(GroupDetail), ...errors(400, 401, 403, 404) },
  },
  'PATCH /v1/groups/:id': {
    description: 'A group provisioned by an identity provider keeps its name: renaming it → 409 CONFLICT.',
    params: GroupIdParams,
    body: UpdateGroupBody,
    response: { 200: Ok(GroupDetail), ...errors(400, 401, 403, 404, 409) },
  },
  'DELETE /v1/groups/:id': {
    description:
      'Deletes the group and removes it from every member. A provisioned group → 409 CONFLICT naming the provider.',
    params: GroupIdParams,
    response: {
      200: Ok(
        Type.Object({ id: IdSchema('group'), deleted: Type.Literal(true) }, { additionalProperties: false }),
      ),
      ...errors(400, 401, 403, 404, 409),
    },
  },
  'GET /v1/groups/:id/members': {
    description:
      'Members of the group (user list columns), newest first unless `sort` says otherwise. ' + LIST_PAGING,
    params: GroupIdParams,
    querystring: MembersQuery,
    response: { 200: Ok(UserList), ...errors(400, 401, 403, 404) },
  },
  'POST /v1/groups/:id/members': {
    description:
      'Idempotent: adding an existing member is not an error. Members of a provisioned group → 409 CONFLICT. ' +
      `An admin's memberships need the admin scope (${ADMIN_SCOPE_NOTE}).`,
    params: GroupIdParams,
    body: AddMemberBody,
    response: { 200: Ok(GroupMembership), ...errors(400, 401, 403, 404, 409) },
  },
  'DELETE /v1/groups/:id/members/:userId': {
    description:
      'Members of a group provisioned by an identity provider → 409 CONFLICT naming the provider. ' +
      `An admin's memberships need the admin scope (${ADMIN_SCOPE_NOTE}).`,
    params: GroupMemberParams,
    response: { 200: Ok(GroupMembership), ...errors(400, 401, 403, 404, 409) },
  },
} satisfies RouteSchemaMap;
