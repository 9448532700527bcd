import { type Static, type TObject, type TProperties, Type } from 'typebox';
import { ErrorDetail } from './envelope.js';
import { IdSchema } from './ids.js';
import type { ListPagination } from './pagination.js';
import { StringEnum } from './schema.js';
import {
  type CreateWebhookBody,
  type DeliveryListQuery,
  type UpdateWebhookBody,
  type WebhookDelivery,
  WebhookDelivery as DeliverySchema,
  type WebhookListQuery,
  type WebhookSubscription,
  WebhookSubscription as SubscriptionSchema,
  type WebhookWithSecret,
  WebhookWithSecret as WithSecretSchema,
} from './webhooks.js';

/**
 * The webhooks service's admin RPC (`natsNames(ns).webhooksAdmin`): what the settings console
 * and deskctl (both in identity) ask of the webhooks service, which answers with the same use
 * cases as its HTTP API. Versioned like every RPC (`v`, added by `callRpc`); both sides are
 * tolerant readers (libs/contracts/README.md): the service reads the fields it knows and ignores
 * the rest, the client checks the fields it reads and ignores extra ones.
 */
export const WEBHOOKS_ADMIN_VERSION = 1;

export const WEBHOOKS_ADMIN_OPS = [
  'list',
  'get',
  'create',
  'update',
  'delete',
  'rotateSecret',
  'ping',
  'deliveries',
  'replay',
  'trigger',
] as const;
export type WebhooksAdminOp = (typeof WEBHOOKS_ADMIN_OPS)[number];

/** Where an administrator made the change: recorded as the event's `source` (`console` or `cli`). */
export const WEBHOOKS_ADMIN_VIAS = ['console', 'deskctl'] as const;

/**
 * Who asks, from where: an administrator (identity only sends requests for users it checked are
 * admins; NATS is internal, as for every RPC) and the address of the console request (null from
 * deskctl). It becomes the `system.config_changed` event's actor and metadata.
 */
export const AdminActor = Type.Object({
  userId: Type.String({ minLength: 1, maxLength: 100 }),
  name: Type.String({ maxLength: 200 }),
  email: Type.String({ maxLength: 320 }),
  via: StringEnum(WEBHOOKS_ADMIN_VIAS),
  ip: Type.Union([Type.String({ maxLength: 100 }), Type.Null()]),
  userAgent: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  requestId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
});
export type AdminActor = Static<typeof AdminActor>;

/** What every request carries (read first; the op's own fields are read by the op). */
export const WebhooksAdminEnvelope = Type.Object({
  op: StringEnum(WEBHOOKS_ADMIN_OPS),
  actor: AdminActor,
});

/**
 * `trigger` (deskctl webhooks trigger): a test event of a catalogued type, delivered to every
 * live subscription that takes the type, or to `webhookId` only. Added within version 1: an
 * older service refuses the unknown op (VALIDATION_ERROR naming `body.op`), nothing else changes.
 */
export const TriggerTestEventFields = Type.Object({
  type: Type.String({ minLength: 1, maxLength: 100, description: 'an event type of the catalogue' }),
  webhookId: Type.Optional(IdSchema('webhook', 'only this subscription (it must take the type)')),
});
export type TriggerTestEventFields = Static<typeof TriggerTestEventFields>;

type WithActor<T> = T & { actor: AdminActor };
type Id = { id: string };

/**
 * The requests, one per op. The fields of `create`, `update` and `deliveries` are the HTTP API's
 * body or query fields (checked by the same schemas, so the same 400 messages); `id` and
 * `deliveryId` are its path parameters.
 */
export type WebhooksAdminRequest = WithActor<
  | ({ op: 'list' } & WebhookListQuery)
  | ({ op: 'get' } & Id)
  | ({ op: 'create' } & CreateWebhookBody)
  | ({ op: 'update' } & Id & UpdateWebhookBody)
  | ({ op: 'delete' } & Id)
  | ({ op: 'rotateSecret' } & Id)
  | ({ op: 'ping' } & Id)
  | ({ op: 'deliveries' } & Id & DeliveryListQuery)
  | ({ op: 'replay' } & Id & { deliveryId: string })
  | ({ op: 'trigger' } & TriggerTestEventFields)
>;

/** The answer of each op when it succeeded (`ok: true`). */
export interface WebhooksAdminReplies {
  list: { ok: true; webhooks: WebhookSubscription[]; pagination: ListPagination };
  get: { ok: true; webhook: WebhookSubscription };
  create: { ok: true; webhook: WebhookWithSecret };
  update: { ok: true; webhook: WebhookSubscription };
  delete: { ok: true; id: string; deleted: true };
  rotateSecret: { ok: true; webhook: WebhookWithSecret };
  ping: { ok: true; delivery: WebhookDelivery };
  deliveries: { ok: true; deliveries: WebhookDelivery[]; pagination: ListPagination };
  replay: { ok: true; delivery: WebhookDelivery };
  /** The test event's id and type, and the delivery queued for each subscription that takes it. */
  trigger: { ok: true; event: { id: string; type: string }; deliveries: WebhookDelivery[] };
}

/** A refusal: the HTTP API's error code, message and details (validation, NOT_FOUND…). */
export const AdminRpcError = Type.Object({
  error: Type.Object({
    code: Type.String({ minLength: 1 }),
    message: Type.String(),
    details: Type.Optional(Type.Array(ErrorDetail)),
  }),
});
export type AdminRpcError = Static<typeof AdminRpcError>;

/** A schema's properties without `additionalProperties: false`: a reader that ignores extra fields. */
export const tolerant = <T extends TProperties>(schema: TObject<T>) => Type.Object(schema.properties);

const Webhook = tolerant(SubscriptionSchema);
const Delivery = tolerant(DeliverySchema);
export const TolerantCursorPagination = Type.Object({
  nextCursor: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const Ok = Type.Literal(true);

/** What the client checks in each successful reply (tolerant: extra fields allowed). */
export const WEBHOOKS_ADMIN_REPLIES = {
  list: Type.Object({ ok: Ok, webhooks: Type.Array(Webhook), pagination: TolerantCursorPagination }),
  get: Type.Object({ ok: Ok, webhook: Webhook }),
  create: Type.Object({ ok: Ok, webhook: tolerant(WithSecretSchema) }),
  update: Type.Object({ ok: Ok, webhook: Webhook }),
  delete: Type.Object({ ok: Ok, id: Type.String(), deleted: Type.Literal(true) }),
  rotateSecret: Type.Object({ ok: Ok, webhook: tolerant(WithSecretSchema) }),
  ping: Type.Object({ ok: Ok, delivery: Delivery }),
  deliveries: Type.Object({ ok: Ok, deliveries: Type.Array(Delivery), pagination: TolerantCursorPagination }),
  replay: Type.Object({ ok: Ok, delivery: Delivery }),
  trigger: Type.Object({
    ok: Ok,
    event: Type.Object({ id: Type.String(), type: Type.String() }),
    deliveries: Type.Array(Delivery),
  }),
} satisfies Record<WebhooksAdminOp, TObject>;
