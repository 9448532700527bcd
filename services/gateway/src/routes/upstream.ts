import { Transform } from 'node:stream';
import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import { INTERNAL_HEADERS, PRINCIPAL_HEADER } from '@support-desk/contracts';
import { AppError, errorBody } from '@support-desk/platform';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayConfig } from '../config.js';

/** undici pool options shared by every upstream: keep-alive, bounded connect and response waits. */
export function poolOptions(config: GatewayConfig) {
  return {
    connections: config.UPSTREAM_CONNECTIONS,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS },
    headersTimeout: config.UPSTREAM_TIMEOUT_MS,
    bodyTimeout: config.UPSTREAM_TIMEOUT_MS,
  };
}

export const payloadTooLarge = (limit: number) =>
  new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than ${limit} bytes`);

/**
 * Passes the body through while counting it: over `limit` bytes the stream errors, the upstream
 * call is aborted and the client gets 413 (no buffering, whatever Content-Length claimed).
 */
export function limitStream(request: FastifyRequest, payload: NodeJS.ReadableStream, limit: number) {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      seen += chunk.length;
      if (seen > limit) {
        request.bodyTooLarge = true;
        callback(payloadTooLarge(limit));
        return;
      }
      callback(null, chunk);
    },
  });
  payload.on('error', (err) => counter.destroy(err));
  return payload.pipe(counter);
}

/** Internal headers never come from a client; the credential stays at the gateway. */
export function upstreamHeaders(
  request: FastifyRequest,
  headers: Record<string, unknown>,
  keepAuth: boolean,
) {
  const out: Record<string, unknown> = { ...headers };
  for (const h of INTERNAL_HEADERS) delete out[h];
  if (!keepAuth) delete out.authorization;
  out['x-request-id'] = request.id;
  out['x-forwarded-for'] = request.ip;
  out['x-forwarded-proto'] = request.protocol;
  if (request.principalAssertion) out[PRINCIPAL_HEADER] = request.principalAssertion;
  return out;
}

/** reply-from failures in the envelope: timeouts → 504, anything else (refused, reset) → 502. */
export function upstreamError(reply: FastifyReply, { error }: { error: Error & { statusCode?: number } }) {
  if (reply.sent) return;
  const request = reply.request;
  if (request.bodyTooLarge) {
    reply.header('connection', 'close');
    reply.code(413).send(errorBody('PAYLOAD_TOO_LARGE', 'Request body is larger than its limit'));
    return;
  }
  const timeout = error.statusCode === 504;
  request.log.warn({ err: error.message, code: (error as { code?: string }).code }, 'upstream call failed');
  if (timeout) {
    reply.code(504).send(errorBody('SERVICE_UNAVAILABLE', 'The upstream service did not answer in time'));
  } else {
    reply.code(502).send(errorBody('SERVER_ERROR', 'The upstream service is unreachable'));
  }
}

/** reply-from retries GETs answered 503 unless told otherwise; a gateway must not multiply load. */
export const noRetry = () => null;

/** reply-from hooks for one kind of route: header rewrite, envelope errors, no retries. */
export function fromOptions(keepAuth: boolean): FastifyReplyFromHooks {
  return {
    rewriteRequestHeaders: (req, headers) =>
      upstreamHeaders(req as FastifyRequest, headers, keepAuth) as typeof headers,
    onError: (reply, e) => upstreamError(reply as unknown as FastifyReply, e),
    retryDelay: noRetry,
  };
}
