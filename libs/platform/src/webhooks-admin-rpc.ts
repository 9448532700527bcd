import {
  type NatsNames,
  WEBHOOKS_ADMIN_REPLIES,
  type AdminActor,
  type WebhooksAdminOp,
  type WebhooksAdminReplies,
  type WebhooksAdminRequest,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import { adminRpcClient, type AdminRpcClient, type AdminRpcFields } from './admin-rpc.js';
import type { EventContext } from './events.js';
import type { MessageSigner } from './message-signing.js';

/** What the console shows and deskctl prints when the webhooks service does not answer. */
export const WEBHOOKS_NOT_ANSWERING =
  "The webhooks service is not answering; subscriptions can't be shown or changed right now";

/** The webhooks service did not answer (no responder, a timeout, or no NATS connection at all). */
export class WebhooksUnavailableError extends Error {
  constructor(cause?: unknown) {
    super(WEBHOOKS_NOT_ANSWERING, { cause });
    this.name = 'WebhooksUnavailableError';
  }
}

/** The fields of one op's request, besides `op` and `actor`. */
export type WebhooksAdminFields<K extends WebhooksAdminOp> = AdminRpcFields<WebhooksAdminRequest, K>;

export type WebhooksAdminClient = AdminRpcClient<WebhooksAdminRequest, WebhooksAdminReplies>;

/** The client of the webhooks admin RPC (the settings console, deskctl): see `adminRpcClient`. */
export const webhooksAdminClient = (
  nc: NatsConnection | null,
  names: NatsNames,
  signer: MessageSigner,
  timeoutMs = 5000,
): WebhooksAdminClient =>
  adminRpcClient(nc, {
    subject: names.webhooksAdmin,
    replies: WEBHOOKS_ADMIN_REPLIES,
    unavailable: (cause) => new WebhooksUnavailableError(cause),
    signer,
    timeoutMs,
  });

/** The actor of an admin request: who (an event context's actor) and through what, from where. */
export const adminActorOf = (ctx: EventContext, via: AdminActor['via']): AdminActor => ({
  userId: ctx.actor.id,
  name: ctx.actor.name,
  email: ctx.actor.email,
  via,
  ip: ctx.ipAddress,
  userAgent: ctx.userAgent,
  requestId: ctx.requestId,
});

/** Event patterns typed as text (`request.*, user.created`): separated by commas or spaces. */
export const eventPatternsFrom = (text: string): string[] => [
  ...new Set(text.split(/[\s,]+/).filter(Boolean)),
];
