import type { ServiceName } from '@support-desk/contracts';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
import {
  type MessageSigner,
  type MessageVerifier,
  sentByOneOf,
  signatureOf,
  UnauthenticatedMessageError,
} from './message-signing.js';
import { decodeJson, encodeJson } from './nats.js';
import { requestSpan, serveSpan } from './telemetry/propagation.js';

/**
 * The version of the RPC envelope (`{v, ok, reply | error}`), and of each request, which carries
 * it as `v` next to its fields. Readers on both sides are tolerant: they read the fields they
 * need and ignore the rest, so either side can be upgraded first (rules in
 * libs/contracts/README.md).
 */
export const RPC_VERSION = 1;

/**
 * How old a request's signature may be when it arrives. A request is answered at once; the bound
 * only leaves room for the clocks of two hosts to differ.
 */
export const REQUEST_MAX_AGE_MS = 30_000;

export interface RpcServerOptions {
  /** Checks which service signed each request. */
  verifier: MessageVerifier;
  /** The services that may ask; a request signed by any other is refused. */
  callers: readonly ServiceName[];
  logger?: Logger;
}

/**
 * Why a request is refused before its handler sees it, or null: it must come on this very subject
 * (a JetStream delivery sent to it keeps its own subject), carry a reply subject (an answer goes
 * only where a caller waits for it), and be freshly signed by a service that may ask.
 */
function refusal(msg: Msg, subject: string, { verifier, callers }: RpcServerOptions): string | null {
  if (msg.subject !== subject) return `arrived on ${msg.subject}`;
  if (!msg.reply) return 'no reply subject';
  try {
    const caller = verifier.sender(subject, msg.data, signatureOf(msg.headers), {
      maxAgeMs: REQUEST_MAX_AGE_MS,
    });
    return sentByOneOf(caller, callers) ? null : `${caller} may not ask this`;
  } catch (err) {
    if (err instanceof UnauthenticatedMessageError) return err.message;
    throw err;
  }
}

/**
 * Request-reply over core NATS with JSON bodies. Replicas of the serving side share a queue
 * group so each request is answered once. A refused request gets no answer (an answer would go
 * to a subject its sender chose); the refusal is logged.
 */
export function serveRpc<Req, Res>(
  nc: NatsConnection,
  subject: string,
  handler: (request: Req) => Promise<Res>,
  options: RpcServerOptions,
): Subscription {
  const { logger } = options;
  return nc.subscribe(subject, {
    queue: subject,
    callback: (err, msg) => {
      if (err) {
        logger?.error({ err, subject }, 'rpc subscription error');
        return;
      }
      const refused = refusal(msg, subject, options);
      if (refused) {
        logger?.warn({ subject, reason: refused }, 'rpc request refused');
        return;
      }
      serveSpan(subject, msg.headers, async () => {
        try {
          const reply = await handler(decodeJson<Req>(msg.data));
          msg.respond(encodeJson({ v: RPC_VERSION, ok: true, reply }));
        } catch (e) {
          logger?.error({ err: e, subject }, 'rpc handler failed');
          msg.respond(encodeJson({ v: RPC_VERSION, ok: false, error: 'internal error' }));
        }
      });
    },
  });
}

export class RpcError extends Error {}

export interface RpcCallOptions {
  /** The calling service: every request is signed by it. */
  signer: MessageSigner;
  timeoutMs?: number;
}

export async function callRpc<Req, Res>(
  nc: NatsConnection,
  subject: string,
  request: Req,
  { signer, timeoutMs = 2000 }: RpcCallOptions,
): Promise<Res> {
  const data = encodeJson({ v: RPC_VERSION, ...request });
  const msg = await requestSpan(subject, (headers) =>
    nc.request(subject, data, { timeout: timeoutMs, headers: signer.sign(subject, data, headers) }),
  );
  const body = decodeJson<{ ok?: unknown; reply?: Res; error?: unknown } | null>(msg.data);
  if (body?.ok !== true || typeof body.reply !== 'object' || body.reply === null) {
    throw new RpcError(`${subject}: ${typeof body?.error === 'string' ? body.error : 'no valid reply'}`);
  }
  return body.reply;
}
