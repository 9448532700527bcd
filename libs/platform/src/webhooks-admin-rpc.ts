import {
  ERROR_STATUS,
  type ErrorCode,
  type NatsNames,
  WEBHOOKS_ADMIN_REPLIES,
  WEBHOOKS_ADMIN_OPS,
  type WebhooksAdminActor,
  WebhooksAdminError,
  type WebhooksAdminOp,
  type WebhooksAdminReplies,
  type WebhooksAdminRequest,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError } from './errors.js';
import type { EventContext } from './events.js';
import { firstProblem } from './identity-rpc.js';
import type { MessageSigner } from './message-signing.js';
import { callRpc, RpcError } from './rpc.js';

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
export type WebhooksAdminFields<K extends WebhooksAdminOp> = Omit<
  Extract<WebhooksAdminRequest, { op: K }>,
  'op' | 'actor'
>;

export interface WebhooksAdminClient {
  /**
   * One op, as `actor`. Resolves to the op's reply; a refusal of the use case (validation,
   * NOT_FOUND…) is thrown as the `AppError` the HTTP API would answer; no answer at all is a
   * `WebhooksUnavailableError`; a reply of another shape an `RpcError`.
   */
  call<K extends WebhooksAdminOp>(
    actor: WebhooksAdminActor,
    op: K,
    fields: WebhooksAdminFields<K>,
  ): Promise<WebhooksAdminReplies[K]>;
}

const replyCheckers = Object.fromEntries(
  WEBHOOKS_ADMIN_OPS.map((op) => [op, TypeCompiler.Compile(WEBHOOKS_ADMIN_REPLIES[op])]),
) as unknown as Record<WebhooksAdminOp, TypeCheck<TSchema>>;
const errorChecker = TypeCompiler.Compile(WebhooksAdminError);

const knownCode = (code: string): ErrorCode => (code in ERROR_STATUS ? (code as ErrorCode) : 'SERVER_ERROR');

/**
 * The one client of the webhooks admin RPC, used by the settings console and by deskctl (both
 * in identity, which signs every request, the actor in it included: `signer`). `nc` is null when
 * the caller has no NATS connection (deskctl without NATS): every call is then "not answering",
 * like a service that is down.
 */
export function webhooksAdminClient(
  nc: NatsConnection | null,
  names: NatsNames,
  signer: MessageSigner,
  timeoutMs = 5000,
): WebhooksAdminClient {
  const subject = names.webhooksAdmin;
  return {
    async call(actor, op, fields) {
      if (!nc || nc.isClosed()) throw new WebhooksUnavailableError();
      let reply: unknown;
      try {
        reply = await callRpc<Record<string, unknown>, unknown>(
          nc,
          subject,
          { ...fields, op, actor },
          { signer, timeoutMs },
        );
      } catch (err) {
        // The service answered but failed ("internal error"): not an outage, say what it said.
        if (err instanceof RpcError) throw err;
        throw new WebhooksUnavailableError(err);
      }
      if (errorChecker.Check(reply)) {
        const { code, message, details } = reply.error;
        throw new AppError(knownCode(code), message, {}, details);
      }
      const checker = replyCheckers[op];
      if (!checker.Check(reply))
        throw new RpcError(`${subject} ${op}: malformed reply: ${firstProblem(checker.Errors(reply))}`);
      return reply as WebhooksAdminReplies[typeof op];
    },
  };
}

/** The actor of an admin request: who (an event context's actor) and through what, from where. */
export const adminActorOf = (ctx: EventContext, via: WebhooksAdminActor['via']): WebhooksAdminActor => ({
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
