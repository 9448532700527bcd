import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
import { decodeJson, encodeJson } from './nats.js';

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
      (async () => {
        try {
          const reply = await handler(decodeJson<Req>(msg.data));
          msg.respond(encodeJson({ ok: true, reply }));
        } catch (e) {
          logger?.error({ err: e, subject }, 'rpc handler failed');
          msg.respond(encodeJson({ ok: false, error: 'internal error' }));
        }
      })();
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
  const msg = await nc.request(subject, encodeJson(request), { timeout: timeoutMs });
  const body = decodeJson<{ ok: boolean; reply?: Res; error?: string }>(msg.data);
  if (!body.ok) throw new RpcError(`${subject}: ${body.error ?? 'failed'}`);
  return body.reply as Res;
}
