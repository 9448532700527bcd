import { type Static, Type } from 'typebox';
import { ErrorEnvelope, Ok } from './envelope.js';
import {
  Actor,
  Changes,
  EVENT_TYPES,
  EventMetadata,
  EventSnapshot,
  EventTypeSchema,
  RESOURCE_TYPES,
  ResourceTypeSchema,
} from './events.js';
import { IdSchema } from './ids.js';
import {
  commaListPattern,
  CURSOR_PATTERN,
  CursorPageQuery,
  CursorPagination,
  EnumListQuery,
  EventPagination,
  MAX_CURSOR_LENGTH,
  PagePagination,
} from './pagination.js';
import type { RouteSchemaMap } from './routes.js';
import { DateTimeString } from './schema.js';

export const ACTOR_ROLES = ['admin', 'agent', 'viewer', 'system'] as const;
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
    snapshot: Type.Optional(EventSnapshot),
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

const NullableCursor = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** Page mode of `GET /v1/events`: the spec's page object with `hasMore`, plus `nextCursor`. */
export const EventPagePagination = Type.Object(
  { ...PagePagination.properties, hasMore: EventPagination.properties.hasMore },
  { additionalProperties: false },
);
export type EventPagePagination = Static<typeof EventPagePagination>;

export const EventList = Type.Object(
  {
    events: Type.Array(EventListItem),
    pagination: Type.Union([EventPagePagination, CursorPagination], {
      description:
        'Page mode (no `cursor`): `page`, `limit`, `total`, `pages`, `hasMore` and `nextCursor`. Cursor mode ' +
        '(`cursor` given): `limit`, `nextCursor`, `prevCursor`, `hasMore`, without a total.',
    }),
  },
  { additionalProperties: false },
);
export type EventList = Static<typeof EventList>;

export const RequestEventList = Type.Object(
  {
    events: Type.Array(RequestEventItem),
    // Only in cursor mode (`cursor` or `limit` given): the spec's answer has no pagination object.
    pagination: Type.Optional(CursorPagination),
  },
  { additionalProperties: false },
);
export type RequestEventList = Static<typeof RequestEventList>;

/** One event line of `GET /v1/events/export`: the list item plus the cursor to resume after it. */
export const EventExportLine = Type.Object(
  {
    ...EventListItem.properties,
    cursor: Type.String({
      description: 'Resume after this event: `GET /v1/events/export?cursor=<cursor>` with the same filters.',
    }),
  },
  { additionalProperties: false },
);
export type EventExportLine = Static<typeof EventExportLine>;

/** The last line of a complete export; a stream without it was cut (resume from the last `cursor`). */
export const EventExportEnd = Type.Object(
  {
    type: Type.Literal('end', { description: 'Marks the end line (never an event type)' }),
    count: Type.Integer({ minimum: 0, description: 'Event lines in this answer' }),
    nextCursor: NullableCursor(
      'Resume after the last event sent (later events, or the rest when `hasMore`); null when nothing ' +
        'was sent and no `cursor` was given.',
    ),
    hasMore: Type.Boolean({ description: 'Whether `limit` cut the export before its end' }),
  },
  { additionalProperties: false },
);
export type EventExportEnd = Static<typeof EventExportEnd>;

/**
 * The filters of `GET /v1/events` and of its export. The comma lists (`type`, `resourceType`,
 * `actor.role`) state their allowed values in their patterns, so the validator refuses an unknown
 * one naming the allowed ones.
 */
const EventFilterQuery = {
  type: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: commaListPattern(
        EVENT_TYPES.map((type) => type.replaceAll('.', '\\.')).join('|'),
        `must be one or more event types separated by commas: ${EVENT_TYPES.join(', ')}`,
      ),
      description: `One event type or several separated by commas (any of them matches). Types: ${EVENT_TYPES.join(', ')}.`,
    }),
  ),
  resourceType: Type.Optional(EnumListQuery(RESOURCE_TYPES, 'Resource type')),
  resourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Exact resource id' })),
  userId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Events performed by this actor id' }),
  ),
  'actor.role': Type.Optional(EnumListQuery(ACTOR_ROLES, "The actor's role")),
  actorRole: Type.Optional(EnumListQuery(ACTOR_ROLES, 'Alias of `actor.role`')),
  since: Type.Optional(DateTimeString('Events at or after this instant (inclusive, RFC 3339)')),
  until: Type.Optional(DateTimeString('Events strictly before this instant (exclusive, RFC 3339)')),
};

/**
 * `GET /v1/events` query: the filters, `page`/`limit` as the spec says, or `cursor`. Unknown
 * parameters are refused so a misspelt filter never silently widens an audit query.
 */
export const EventsQuery = Type.Object(
  { ...EventFilterQuery, ...CursorPageQuery },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

/** Most event lines one export answer may be bounded to with `limit`. */
export const EXPORT_LIMIT_MAX = 10_000_000;

/** `GET /v1/events/export` query: the list's filters, `cursor` to resume, `limit` to bound it. */
export const EventsExportQuery = Type.Object(
  {
    ...EventFilterQuery,
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_CURSOR_LENGTH,
        pattern: CURSOR_PATTERN,
        description:
          "Resume after the event whose line carried this `cursor` (or an end line's `nextCursor`); the " +
          'same filters must be sent (`since`/`until` may change). Oldest first, so resuming at the end ' +
          'later gives the events stored since.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: EXPORT_LIMIT_MAX,
        description: 'At most this many event lines (default: all); the end line says `hasMore`.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type EventsExportQuery = Static<typeof EventsExportQuery>;

/** `GET /v1/requests/:id/events` query: none (the spec's answer), or a cursor page. */
export const RequestEventsQuery = Type.Object(
  {
    cursor: CursorPageQuery.cursor,
    // No schema default: its absence (with no cursor) selects the spec's unpaginated answer.
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Events per page (default 20 once paging); values above 100 are clamped to 100.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RequestEventsQuery = Static<typeof RequestEventsQuery>;

const EventIdParams = Type.Object({ id: IdSchema('event') }, { additionalProperties: false });
const RequestIdParams = Type.Object({ id: IdSchema('request') }, { additionalProperties: false });

const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));

/** Public request/response schemas of the audit service, keyed by route (see PUBLIC_ROUTES). */
export const auditRouteSchemas = {
  'GET /v1/events': {
    description:
      'Newest first (timestamp, then id, descending). `since` is inclusive, `until` exclusive. ' +
      '`limit` defaults to 20; values above 100 are clamped to 100. Page mode (`page`) counts the ' +
      'matches; cursor mode (`cursor` from `pagination.nextCursor`/`prevCursor` or the `Link` header) ' +
      'does not, has no depth limit and is stable under concurrent inserts. `Link` carries `next` and ' +
      '`prev`. Requires the admin scope.',
    querystring: EventsQuery,
    response: { 200: Ok(EventList), ...errors(400, 401, 403) },
  },
  'GET /v1/events/export': {
    description:
      'The filtered audit log as NDJSON (`application/x-ndjson`), oldest first (timestamp, then id), ' +
      'streamed: one event per line in the list shape plus `cursor`, then an end line ' +
      '`{"type":"end","count","nextCursor","hasMore"}`. A stream without the end line was cut: resume ' +
      "with `cursor` = the last line's `cursor`. Send `Accept: application/x-ndjson` (or `*/*`, or none); " +
      '`Accept: application/json` alone is 406. Errors before the first line are the JSON envelope. ' +
      'Requires the admin scope.',
    querystring: EventsExportQuery,
    produces: ['application/x-ndjson'],
    response: {
      200: Type.Union([EventExportLine, EventExportEnd], { description: 'One line of the stream' }),
      ...errors(400, 401, 403, 406),
    },
  },
  'GET /v1/events/:id': {
    description: 'One event with `metadata` and the actor role. Requires the admin scope.',
    params: EventIdParams,
    response: { 200: Ok(EventDetail), ...errors(400, 401, 403, 404) },
  },
  'GET /v1/requests/:id/events': {
    description:
      `Events of one request, oldest first. Without \`cursor\` and \`limit\`: every event, without ` +
      `pagination (at most ${REQUEST_EVENTS_MAX}: the oldest ones; a \`Link\` header \`next\` leads to ` +
      'the rest). With `limit` (default 20, at most 100) or `cursor`: one page and a cursor `pagination`. ' +
      'An unknown request has no events (empty list).',
    params: RequestIdParams,
    querystring: RequestEventsQuery,
    response: { 200: Ok(RequestEventList), ...errors(400, 401, 403) },
  },
} satisfies RouteSchemaMap;
