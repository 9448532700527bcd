import { type Static, Type } from '@sinclair/typebox';
import { idPattern } from './ids.js';
import { StringEnum } from './schema.js';

const RESOURCE_TYPES = ['request', 'user', 'system'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
export const ResourceTypeSchema = StringEnum(RESOURCE_TYPES);

/** The 18 event types of the spec, each with the resourceType it is filed under. */
export const EVENT_CATALOGUE = {
  'request.created': 'request',
  'request.updated': 'request',
  'request.status_changed': 'request',
  'request.assigned': 'request',
  'request.priority_changed': 'request',
  'request.comment_added': 'request',
  'request.attachment_added': 'request',
  'request.deleted': 'request',
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

const EVENT_SOURCES = ['api', 'oauth', 'cli', 'system'] as const;
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

export const EventMetadata = Type.Object(
  {
    userAgent: Type.Union([Type.String(), Type.Null()]),
    source: StringEnum(EVENT_SOURCES),
    requestId: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type EventMetadata = Static<typeof EventMetadata>;

/** The domain event as published on JetStream and stored by audit. */
export const DomainEvent = Type.Object(
  {
    id: Type.String({ pattern: idPattern('event') }),
    type: EventTypeSchema,
    resourceType: ResourceTypeSchema,
    resourceId: Type.String({ minLength: 1 }),
    actor: Actor,
    changes: Type.Optional(Changes),
    metadata: EventMetadata,
    timestamp: Type.String({ format: 'date-time' }),
    ipAddress: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type DomainEvent = Static<typeof DomainEvent>;
