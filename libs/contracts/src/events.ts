import { type Static, Type } from 'typebox';
import { UserDetail } from './identity.js';
import { idPattern } from './ids.js';
import { RequestEventSnapshot } from './requests.js';
import { StringEnum } from './schema.js';

export const RESOURCE_TYPES = ['request', 'user', 'system'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export const ResourceTypeSchema = StringEnum(RESOURCE_TYPES);

/**
 * The 18 event types of the spec, and the trash's two (issue 38: a deleted request restored, or
 * purged for good after the trash period), each with the resourceType it is filed under.
 */
export const EVENT_CATALOGUE = {
  'request.created': 'request',
  'request.updated': 'request',
  'request.status_changed': 'request',
  'request.assigned': 'request',
  'request.priority_changed': 'request',
  'request.comment_added': 'request',
  'request.attachment_added': 'request',
  'request.deleted': 'request',
  'request.restored': 'request',
  'request.purged': 'request',
  'user.created': 'user',
  'user.updated': 'user',
  'user.role_changed': 'user',
  'user.deactivated': 'user',
  'user.login': 'user',
  'user.logout': 'user',
  'system.sla_warning': 'system',
  'system.sla_breach': 'system',
  'system.sync_completed': 'system',
  'system.config_changed': 'system',
} as const satisfies Record<string, ResourceType>;

export type EventType = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];
export const EventTypeSchema = StringEnum(EVENT_TYPES);

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOGUE, value);
}

/**
 * Where a change came from: the API (`api` with an API key, `oauth` with an access token), deskctl
 * (`cli`), the settings console in the browser (`console`), the service itself (`system`), or an
 * identity provider connection pushing (`scim`) or being pulled from (`ldap`).
 */
export const EVENT_SOURCES = ['api', 'oauth', 'cli', 'console', 'system', 'scim', 'ldap'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

/** Who did it. System actions (SLA monitor) use SYSTEM_ACTOR. */
export const Actor = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Type.String(),
    role: StringEnum(['admin', 'agent', 'viewer', 'system'] as const),
  },
  { additionalProperties: false },
);
export type Actor = Static<typeof Actor>;

export const SYSTEM_ACTOR: Actor = {
  id: 'system',
  name: 'Support Desk',
  email: 'system@support-desk.local',
  role: 'system',
};

const Change = Type.Object({ from: Type.Unknown(), to: Type.Unknown() }, { additionalProperties: false });
export const Changes = Type.Record(Type.String(), Change);
export type Changes = Record<string, { from: unknown; to: unknown }>;

/** A W3C trace id: 32 lowercase hex digits, not all zero. */
export const TRACE_ID_PATTERN = '^(?!0{32})[0-9a-f]{32}$';

export const EventMetadata = Type.Object(
  {
    userAgent: Type.Union([Type.String(), Type.Null()]),
    source: StringEnum(EVENT_SOURCES),
    requestId: Type.Union([Type.String(), Type.Null()]),
    /** The W3C trace the change was made in (added within version 1; absent when untraced). */
    traceId: Type.Optional(Type.String({ pattern: TRACE_ID_PATTERN })),
  },
  { additionalProperties: false },
);
export type EventMetadata = Static<typeof EventMetadata>;

/**
 * The resource right after the change, in every `request.*` and `user.*` event (added within
 * version 1, so optional: older events have none, and a reader must do without it): a request as
 * `RequestEventSnapshot`, a user as `GET /v1/users/:id` shows it (nothing a viewer could not read,
 * no secret). `system.*` events carry none.
 */
export const EventSnapshot = Type.Union([RequestEventSnapshot, UserDetail], {
  description:
    'The resource right after the change (request.* and user.* events of this release; older events ' +
    'have none): a request as `GET /v1/requests/:id` shows it to an agent, with `commentCount` and ' +
    '`attachmentCount` instead of comments and attachments (an internal note never appears); a user ' +
    'as `GET /v1/users/:id` shows it.',
});
export type EventSnapshot = Static<typeof EventSnapshot>;

/**
 * The version of the domain event this release publishes, in every event's `v`. Within a version
 * producers only add optional fields (see libs/contracts/README.md); events published before
 * versions existed have no `v` and are version 1.
 */
export const EVENT_VERSION = 1;

/** The domain event as this release publishes it (producers are checked against it). */
export const DomainEvent = Type.Object(
  {
    v: Type.Integer({ minimum: 1 }),
    id: Type.String({ pattern: idPattern('event') }),
    type: EventTypeSchema,
    resourceType: ResourceTypeSchema,
    resourceId: Type.String({ minLength: 1 }),
    actor: Actor,
    changes: Type.Optional(Changes),
    metadata: EventMetadata,
    timestamp: Type.String({ format: 'date-time' }),
    ipAddress: Type.Optional(Type.String()),
    snapshot: Type.Optional(EventSnapshot),
  },
  { additionalProperties: false },
);
export type DomainEvent = Static<typeof DomainEvent>;

/**
 * What every reader of the events stream needs, and all it checks: the envelope, which no version
 * changes. Unknown fields, unknown event types and higher versions are not errors: a reader takes
 * what it knows and ignores the rest (a tolerant reader), so an older consumer keeps working while
 * a newer producer is rolled out.
 */
export const EventEnvelope = Type.Object({
  v: Type.Optional(Type.Integer({ minimum: 1 })),
  id: Type.String({ pattern: idPattern('event') }),
  type: Type.String({ minLength: 3, maxLength: 100, pattern: '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$' }),
  resourceType: Type.String({ minLength: 1, maxLength: 50 }),
  resourceId: Type.String({ minLength: 1, maxLength: 200 }),
  actor: Type.Object({ id: Type.String(), name: Type.String(), email: Type.String(), role: Type.String() }),
  changes: Type.Optional(
    Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
  ),
  metadata: Type.Object({
    userAgent: Type.Union([Type.String(), Type.Null()]),
    source: Type.String(),
    requestId: Type.Union([Type.String(), Type.Null()]),
    // Not checked here: a malformed trace id is dropped by the decoder, never a dead letter.
    traceId: Type.Optional(Type.Unknown()),
  }),
  timestamp: Type.String({ format: 'date-time' }),
  ipAddress: Type.Optional(Type.String()),
  // Not checked here: one that is not an object is dropped by the decoder, and the presenter shows
  // only what checks against this release's EventSnapshot; never a dead letter.
  snapshot: Type.Optional(Type.Unknown()),
});

/**
 * An event as a reader received it: the envelope's known fields only (unknown ones dropped), its
 * version (1 when absent), and a type and resource type this release may not know.
 */
export interface ReceivedEvent {
  v: number;
  id: string;
  type: string;
  resourceType: string;
  resourceId: string;
  actor: { id: string; name: string; email: string; role: string };
  changes?: Changes;
  metadata: { userAgent: string | null; source: string; requestId: string | null; traceId?: string };
  timestamp: string;
  ipAddress?: string;
  /** As the producer wrote it (any object): `publicSnapshot` in the platform shows what this release knows. */
  snapshot?: Record<string, unknown>;
}
