import {
  type AdminActor,
  AdminRpcError,
  ERROR_STATUS,
  type ErrorCode,
  OPERATOR_CALLERS,
} from '@support-desk/contracts';
import type { NatsConnection } from '@nats-io/transport-node';
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { AppError, isAppError } from './errors.js';
import type { EventContext } from './events.js';
import { firstProblem } from './identity-rpc.js';
import type { Logger } from './logger.js';
import type { MessageSigner, MessageVerifier } from './message-signing.js';
import { callRpc, RpcError, serveRpc } from './rpc.js';
import { checkInput } from './validation.js';

/** The fields of one op's request, besides `op` and `actor`. */
export type AdminRpcFields<Request extends { op: string }, K extends Request['op']> = Omit<
  Extract<Request, { op: K }>,
  'op' | 'actor'
>;

export interface AdminRpcClient<
  Request extends { op: string },
  Replies extends Record<Request['op'], unknown>,
> {
  /**
   * One op, as `actor`. Resolves to the op's reply; a refusal of the use case (validation,
   * NOT_FOUND…) is thrown as the `AppError` the HTTP API would answer; no answer at all is the
   * client's "unavailable" error; a reply of another shape an `RpcError`.
   */
  call<K extends Request['op']>(
    actor: AdminActor,
    op: K,
    fields: AdminRpcFields<Request, K>,
  ): Promise<Replies[K]>;
}

export interface AdminRpcClientOptions<Op extends string> {
  /** The service's admin subject (`names.webhooksAdmin`, `names.requestsAdmin`). */
  subject: string;
  /** What the client checks in each op's successful reply (the contract's tolerant schemas). */
  replies: Record<Op, TSchema>;
  /** The error of a service that does not answer (it names the service for the reader). */
  unavailable: (cause?: unknown) => Error;
  signer: MessageSigner;
  timeoutMs?: number;
}

const errorChecker = Compile(AdminRpcError);

const knownCode = (code: string): ErrorCode => (code in ERROR_STATUS ? (code as ErrorCode) : 'SERVER_ERROR');

/**
 * The one client of the services' admin RPCs (webhooks, requests), used by the settings console
 * and by deskctl (both in identity, which signs every request, the actor in it included). `nc` is
 * null when the caller has no NATS connection (deskctl without NATS): every call is then
 * "unavailable", like a service that is down.
 */
export function adminRpcClient<
  Request extends { op: string },
  Replies extends Record<Request['op'], unknown>,
>(
  nc: NatsConnection | null,
  options: AdminRpcClientOptions<Request['op']>,
): AdminRpcClient<Request, Replies> {
  const { subject, unavailable, signer, timeoutMs = 5000 } = options;
  const replyCheckers = Object.fromEntries(
    Object.entries<TSchema>(options.replies).map(([op, schema]) => [op, Compile(schema)]),
  ) as Record<string, Validator>;
  return {
    async call(actor, op, fields) {
      if (!nc || nc.isClosed()) throw unavailable();
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
        throw unavailable(err);
      }
      if (errorChecker.Check(reply)) {
        const { code, message, details } = reply.error;
        throw new AppError(knownCode(code), message, {}, details);
      }
      const checker = replyCheckers[op]!;
      if (!checker.Check(reply))
        throw new RpcError(`${subject} ${op}: malformed reply: ${firstProblem(checker, reply)}`);
      return reply as Replies[typeof op];
    },
  };
}

/** The administrator and their address, as the events of their changes record them. */
export const adminContextOf = (a: AdminActor): EventContext => ({
  actor: { id: a.userId, name: a.name, email: a.email, role: 'admin' },
  source: a.via === 'console' ? 'console' : 'cli',
  requestId: a.requestId ?? null,
  userAgent: a.userAgent ?? (a.via === 'deskctl' ? 'deskctl' : null),
  ipAddress: a.ip,
});

/**
 * The fields of a request that a schema knows, and only those: a tolerant reader (a newer
 * client's extra field is ignored), checked as strictly as the HTTP API checks its input.
 */
export function adminFieldsOf<T>(
  request: Record<string, unknown>,
  schema: { properties: object },
  part: 'body' | 'querystring' | 'params',
): T {
  const known = Object.keys(schema.properties).filter((k) => request[k] !== undefined);
  return checkInput<T>(schema, Object.fromEntries(known.map((k) => [k, request[k]])), part);
}

/**
 * Serves a service's admin RPC on `subject`: only requests identity signed are answered (the
 * actor in them is identity's word: it sends requests only for administrators it checked, not
 * any NATS publisher's). `answer` reads the envelope and runs the op; a refusal of the use case
 * (an `AppError`) becomes `{error: {code, message, details?}}` as the HTTP API words it.
 */
export function serveAdminRpc<Reply>(
  nc: NatsConnection,
  subject: string,
  answer: (request: Record<string, unknown>) => Promise<Reply>,
  options: { verifier: MessageVerifier; logger: Logger },
): { stop(): void } {
  const sub = serveRpc<Record<string, unknown>, Reply | AdminRpcError>(
    nc,
    subject,
    async (request) => {
      try {
        return await answer(request && typeof request === 'object' ? request : {});
      } catch (err) {
        if (!isAppError(err)) throw err;
        const details = err.details ? { details: err.details } : {};
        return { error: { code: err.code, message: err.message, ...details } };
      }
    },
    { verifier: options.verifier, callers: OPERATOR_CALLERS, logger: options.logger },
  );
  return { stop: () => sub.unsubscribe() };
}
