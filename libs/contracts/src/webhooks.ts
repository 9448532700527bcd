import { type Static, Type } from 'typebox';
import { ErrorEnvelope, Ok } from './envelope.js';
import { IdSchema } from './ids.js';
import { commaListPattern, CursorPageQuery, EnumListQuery, ListPagination } from './pagination.js';
import type { RouteSchemaMap } from './routes.js';
import { DateTimeString, DescribedPattern, StringEnum } from './schema.js';
import { HTTP_URL_PATTERN } from './url-pattern.js';
import { EVENT_TYPES, RESOURCE_TYPES } from './events.js';

/** Documented input limits (README of services/webhooks). */
export const WEBHOOK_LIMITS = {
  url: 2048,
  description: 500,
  events: 50,
} as const;

/**
 * What a subscription can listen to: an event type (`request.created`), every type of a family
 * (`request.*`) or everything (`*`); the schema lists them all, so an unknown one is refused
 * naming the allowed ones and a client or generator knows them.
 */
export const EVENT_PATTERNS = ['*', ...RESOURCE_TYPES.map((family) => `${family}.*`), ...EVENT_TYPES];
const EventPattern = StringEnum(EVENT_PATTERNS, {
  description: 'An event type (`request.created`), a family (`request.*`) or `*` for every event.',
});

const EventPatterns = Type.Array(EventPattern, {
  minItems: 1,
  maxItems: WEBHOOK_LIMITS.events,
  uniqueItems: true,
});

const WebhookUrl = Type.String({
  minLength: 8,
  maxLength: WEBHOOK_LIMITS.url,
  pattern: DescribedPattern(
    HTTP_URL_PATTERN,
    'must be an http or https URL without credentials or fragment, such as https://hooks.example.com/support-desk',
  ),
  description:
    'Where deliveries are POSTed: https (plain http only to a loopback receiver the operator admits, or ' +
    'where the operator sets WEBHOOKS_ALLOW_HTTP), no credentials, no fragment. Destinations in private, ' +
    'loopback, link-local and metadata ranges are refused unless the operator allows them.',
});

const Description = Type.String({ maxLength: WEBHOOK_LIMITS.description });

/** When a temporary subscription goes: in the future, checked by the service. */
const ExpiresAt = DateTimeString(
  'Makes the subscription temporary: the service deletes it (a `system.config_changed` event, actor `system`) ' +
    'within `WEBHOOKS_RETENTION_SWEEP_MS` (10 min) after this time. Must be in the future.',
);

export const WEBHOOK_DISABLED_REASONS = ['manual', 'gone', 'failing'] as const;

/** A webhook subscription as every route shows it (never its secret). */
export const WebhookSubscription = Type.Object(
  {
    id: IdSchema('webhook'),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.String(),
    active: Type.Boolean({
      description: 'Whether deliveries are attempted. Events keep being recorded while inactive.',
    }),
    disabledReason: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the subscription is inactive: set by the service when the receiver answered 410 Gone or ' +
        'kept failing, `manual` when a client set `active: false`; null while active.',
    }),
    disabledAt: Type.Union([DateTimeString(), Type.Null()]),
    previousSecretExpiresAt: Type.Union([DateTimeString(), Type.Null()], {
      description: 'After a rotation: until when the previous secret still signs beside the new one.',
    }),
    expiresAt: Type.Optional(
      DateTimeString(
        "A temporary subscription (such as `deskctl webhooks listen`'s): when the service deletes it. Absent: kept until deleted.",
      ),
    ),
    createdAt: DateTimeString(),
    updatedAt: DateTimeString(),
  },
  { additionalProperties: false },
);
export type WebhookSubscription = Static<typeof WebhookSubscription>;

const SigningSecret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/=]+$',
  description: 'The signing secret (Standard Webhooks `whsec_` form). Shown once: store it now.',
});

/** The answer of a create or a rotation: the subscription and, this once, its secret. */
export const WebhookWithSecret = Type.Object(
  { ...WebhookSubscription.properties, secret: SigningSecret },
  { additionalProperties: false },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecret>;

export const CreateWebhookBody = Type.Object(
  {
    url: WebhookUrl,
    events: EventPatterns,
    description: Type.Optional(Description),
    active: Type.Optional(Type.Boolean({ default: true })),
    expiresAt: Type.Optional(ExpiresAt),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(EventPatterns),
    description: Type.Optional(Description),
    active: Type.Optional(Type.Boolean()),
    expiresAt: Type.Optional(
      Type.Union([ExpiresAt, Type.Null()], { description: 'A new expiry, or null: kept until deleted.' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One HTTP attempt of a delivery. */
export const DeliveryAttempt = Type.Object(
  {
    at: DateTimeString('When the attempt started'),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null when none came' }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'Network error, timeout or refusal (SSRF rules, redirect); null when a status came',
    }),
    durationMs: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const WebhookDelivery = Type.Object(
  {
    id: IdSchema('delivery', 'dlv_ id; also the `webhook-id` header: stable per event and subscription'),
    webhookId: IdSchema('webhook'),
    eventId: Type.Union([IdSchema('event'), Type.Null()], {
      description: 'null for a ping and for a test event (deskctl webhooks trigger: its payload has its id)',
    }),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Array(DeliveryAttempt),
    nextAttemptAt: Type.Union([DateTimeString(), Type.Null()], {
      description: 'When the next attempt is due (pending deliveries); null otherwise',
    }),
    createdAt: DateTimeString(),
  },
  { additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

const WebhookIdParams = Type.Object({ id: IdSchema('webhook') }, { additionalProperties: false });
const DeliveryParams = Type.Object(
  { id: IdSchema('webhook'), deliveryId: IdSchema('delivery') },
  { additionalProperties: false },
);

export const WebhookListQuery = Type.Object(CursorPageQuery, { additionalProperties: false });
export type WebhookListQuery = Static<typeof WebhookListQuery>;

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(EnumListQuery(DELIVERY_STATUSES, 'Status')),
    eventType: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        // The shape of an event type, not the catalogue: deliveries keep types the catalogue dropped.
        pattern: commaListPattern(
          '[a-z][a-z0-9_]*(?:\\.[a-z][a-z0-9_]*)+',
          'must be event types (such as request.created) separated by commas',
        ),
        description: 'Event types, separated by commas (any of them matches); `webhook.ping` for pings.',
      }),
    ),
    ...CursorPageQuery,
  },
  { additionalProperties: false },
);
export type DeliveryListQuery = Static<typeof DeliveryListQuery>;

const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorEnvelope]));

const PAGING =
  'Newest first. Pages by `page` (with a total) or by `cursor` (no total, stable under concurrent inserts); ' +
  'the `Link` header carries the `next` and `prev` URIs.';

/** Public request/response schemas of the webhooks service, keyed by route (see PUBLIC_ROUTES). */
export const webhooksRouteSchemas = {
  'GET /v1/webhooks': {
    description: PAGING,
    querystring: WebhookListQuery,
    response: {
      200: Ok(
        Type.Object(
          { webhooks: Type.Array(WebhookSubscription), pagination: ListPagination },
          { additionalProperties: false },
        ),
      ),
      ...errors(400, 401, 403),
    },
  },
  'POST /v1/webhooks': {
    description:
      'The answer carries the signing secret, once. Deliveries are signed per the Standard Webhooks ' +
      'specification (`webhook-id`, `webhook-timestamp`, `webhook-signature`); the body is the event as ' +
      '`GET /v1/events/:id` shows it (request.* and user.* events with their `snapshot`, the resource ' +
      'after the change) plus `webhookId`. Changes to subscriptions are recorded as `system.config_changed` ' +
      'events.',
    body: CreateWebhookBody,
    location: '/v1/webhooks/:id',
    response: { 201: Ok(WebhookWithSecret), ...errors(400, 401, 403) },
  },
  'GET /v1/webhooks/:id': {
    params: WebhookIdParams,
    response: { 200: Ok(WebhookSubscription), ...errors(400, 401, 403, 404) },
  },
  'PATCH /v1/webhooks/:id': {
    description:
      '`active: true` on a disabled subscription re-enables it: its held deliveries resume, oldest first.',
    params: WebhookIdParams,
    body: UpdateWebhookBody,
    response: { 200: Ok(WebhookSubscription), ...errors(400, 401, 403, 404) },
  },
  'DELETE /v1/webhooks/:id': {
    description: 'Stops every delivery of the subscription; its pending deliveries are not attempted.',
    params: WebhookIdParams,
    response: {
      200: Ok(
        Type.Object(
          { id: IdSchema('webhook'), deleted: Type.Literal(true) },
          { additionalProperties: false },
        ),
      ),
      ...errors(400, 401, 403, 404),
    },
  },
  'POST /v1/webhooks/:id/rotate-secret': {
    description:
      'A new secret, returned once. The previous one keeps signing beside it (two signatures in ' +
      '`webhook-signature`) until `previousSecretExpiresAt`, so receivers can roll over.',
    params: WebhookIdParams,
    response: { 200: Ok(WebhookWithSecret), ...errors(400, 401, 403, 404) },
  },
  'POST /v1/webhooks/:id/ping': {
    description: 'Queues a `webhook.ping` delivery (attempted even while the subscription is inactive).',
    params: WebhookIdParams,
    response: { 202: Ok(WebhookDelivery), ...errors(400, 401, 403, 404) },
  },
  'GET /v1/webhooks/:id/deliveries': {
    description: `Every delivery with its attempts (time, HTTP status or error, duration) and next retry. ${PAGING}`,
    params: WebhookIdParams,
    querystring: DeliveryListQuery,
    response: {
      200: Ok(
        Type.Object(
          { deliveries: Type.Array(WebhookDelivery), pagination: ListPagination },
          { additionalProperties: false },
        ),
      ),
      ...errors(400, 401, 403, 404),
    },
  },
  'POST /v1/webhooks/:id/deliveries/:deliveryId/replay': {
    description:
      'Queues the delivery again, due now, with the same `webhook-id` (receivers de-duplicate on it) ' +
      'and a fresh schedule of retries.',
    params: DeliveryParams,
    response: { 202: Ok(WebhookDelivery), ...errors(400, 401, 403, 404) },
  },
} satisfies RouteSchemaMap;
