import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
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
 * Request-reply over core NATS with JSON bodies. Replicas of the serving side share a queue
 * group so each request is answered once.
 */
export function serveRpc<Req, Res>(
  nc: NatsConnection,
  subject: string,
  handler: (request: Req) => Promise<Res>,
  logger?: Logger,
): Subscription {
  return nc.subscribe(subject, {
    queue: subject,
    callback: (err, msg) => {
      if (err) {
        logger?.error({ err, subject }, 'rpc subscription error');
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

export async function callRpc<Req, Res>(
  nc: NatsConnection,
  subject: string,
  request: Req,
  timeoutMs = 2000,
): Promise<Res> {
  const msg = await requestSpan(subject, (headers) =>
    nc.request(subject, encodeJson({ v: RPC_VERSION, ...request }), {
      timeout: timeoutMs,
      ...(headers ? { headers } : {}),
    }),
  );
  const body = decodeJson<{ ok?: unknown; reply?: Res; error?: unknown } | null>(msg.data);
  if (body?.ok !== true || typeof body.reply !== 'object' || body.reply === null) {
    throw new RpcError(`${subject}: ${typeof body?.error === 'string' ? body.error : 'no valid reply'}`);
  }
  return body.reply;
}
