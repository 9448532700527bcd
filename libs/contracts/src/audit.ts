import { type Static, Type } from '@sinclair/typebox';
import { ErrorEnvelope, Ok } from './envelope.js';
import { Actor, Changes, EVENT_TYPES, EventMetadata, EventTypeSchema, ResourceTypeSchema } from './events.js';
import { IdSchema } from './ids.js';
import { EventPagination, PageQuery } from './pagination.js';
import type { RouteSchemaMap } from './routes.js';
import { DateTimeString, StringEnum } from './schema.js';

const ACTOR_ROLES = ['admin', 'agent', 'viewer', 'system'] as const;
export type ActorRole = (typeof ACTOR_ROLES)[number];

/** Most events `GET /v1/requests/:id/events` returns (oldest first); documented in services/audit. */
export const REQUEST_EVENTS_MAX = 1000;

/** The actor as event lists show it: no role (the single read adds it). */
const EventActorSummary = Type.Object(
  { id: Type.String(), name: Type.String(), email: Type.String() },
  { additionalProperties: false },
);

/** An event in `GET /v1/events`: no metadata, actor without role. */
export const EventListItem = Type.Object(
  {
    id: IdSchema('event'),
    type: EventTypeSchema,
    resourceType: ResourceTypeSchema,
    resourceId: Type.String(),
    actor: EventActorSummary,
    changes: Type.Optional(Changes),
    timestamp: DateTimeString('When it occurred'),
    ipAddress: Type.Optional(Type.String({ description: 'Origin address, when known' })),
  },
  { additionalProperties: false },
);
export type EventListItem = Static<typeof EventListItem>;

/** `GET /v1/events/:id`: the list fields plus `metadata` and `actor.role`. */
export const EventDetail = Type.Object(
  {
    ...EventListItem.properties,
    actor: Actor,
    metadata: EventMetadata,
  },
  { additionalProperties: false },
);
export type EventDetail = Static<typeof EventDetail>;

/** An event in `GET /v1/requests/:id/events`. */
export const RequestEventItem = Type.Object(
  {
    id: IdSchema('event'),
    type: EventTypeSchema,
    timestamp: DateTimeString('When it occurred'),
    actor: EventActorSummary,
    changes: Type.Optional(Changes),
  },
  { additionalProperties: false },
);
export type RequestEventItem = Static<typeof RequestEventItem>;

export const EventList = Type.Object(
  { events: Type.Array(EventListItem), pagination: EventPagination },
  { additionalProperties: false },
);
export type EventList = Static<typeof EventList>;

export const RequestEventList = Type.Object(
  { events: Type.Array(RequestEventItem) },
  { additionalProperties: false },
);
export type RequestEventList = Static<typeof RequestEventList>;

/**
 * `GET /v1/events` query. `type` is checked against the catalogue by the service (so the 400
 * names the unknown value); unknown parameters are refused so a misspelt filter never silently
 * widens an audit query.
 */
export const EventsQuery = Type.Object(
  {
    type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: `One event type or several separated by commas (any of them matches). Types: ${EVENT_TYPES.join(', ')}.`,
      }),
    ),
    resourceType: Type.Optional(ResourceTypeSchema),
    resourceId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Exact resource id' }),
    ),
    userId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Events performed by this actor id' }),
    ),
    'actor.role': Type.Optional(StringEnum(ACTOR_ROLES, { description: "The actor's role" })),
    actorRole: Type.Optional(StringEnum(ACTOR_ROLES, { description: 'Alias of `actor.role`' })),
    since: Type.Optional(DateTimeString('Events at or after this instant (inclusive, RFC 3339)')),
    until: Type.Optional(DateTimeString('Events strictly before this instant (exclusive, RFC 3339)')),
    ...PageQuery,
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

const EventIdParams = Type.Object({ id: IdSchema('event') }, { additionalProperties: false });
const RequestIdParams = Type.Object({ id: IdSchema('request') }, { additionalProperties: false });

const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));

/** Public request/response schemas of the audit service, keyed by route (see PUBLIC_ROUTES). */
export const auditRouteSchemas = {
  'GET /v1/events': {
    description:
      'Newest first (timestamp, then id, descending). `since` is inclusive, `until` exclusive. ' +
      '`limit` defaults to 20; values above 100 are clamped to 100. Requires the admin scope.',
    querystring: EventsQuery,
    response: { 200: Ok(EventList), ...errors(400, 401, 403) },
  },
  'GET /v1/events/:id': {
    description: 'One event with `metadata` and the actor role. Requires the admin scope.',
    params: EventIdParams,
    response: { 200: Ok(EventDetail), ...errors(400, 401, 403, 404) },
  },
  'GET /v1/requests/:id/events': {
    description:
      `Events of one request, oldest first, without pagination (at most ${REQUEST_EVENTS_MAX}: the oldest ones). ` +
      'An unknown request has no events (empty list).',
    params: RequestIdParams,
    response: { 200: Ok(RequestEventList), ...errors(400, 401, 403) },
  },
} satisfies RouteSchemaMap;
