import { errorBody } from '@support-desk/platform/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { upstreamErrors } from '../metrics.js';

/**
 * Errors after which nothing can have reached the service: the connection was never made, or
 * the call went to the pool of a replica just taken out of rotation (undici closes that pool
 * gracefully: what it had already sent completes, a call given to it after is refused unsent).
 */
export const NOT_CONNECTED = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED']);
/** Errors of a connection that broke: the service may have acted on the call. */
export const CONNECTION_BROKE = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);
/** undici refused to send the request it was given: the gateway's doing, nothing was sent. */
const NOT_SENDABLE = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/**
 * The status recorded (log line, HTTP metrics) for a call whose client hung up before its
 * request was complete: nginx's 499 "client closed request". Nobody reads the answer; the
 * status says whose doing it was.
 */
const CLIENT_CLOSED_REQUEST = 499;

/** The client went away before it had sent its whole request (headers and body). */
export function clientClosedRequest(request: FastifyRequest): boolean {
  const raw = request.raw;
  return !raw.complete && (raw.destroyed || raw.socket?.destroyed === true);
}

/**
 * Records a request its client abandoned mid-body: not an upstream failure (nothing is counted
 * against a service, no warning), one info line with the status that names the client. (The
 * platform's line per request is written when an answer is sent, and this one never is.)
 */
export function recordClientClosedRequest(request: FastifyRequest, reply: FastifyReply) {
  if (request.quietLogLevel) request.log.level = request.quietLogLevel;
  request.log.info(
    { method: request.method, url: request.url.split('?')[0], statusCode: CLIENT_CLOSED_REQUEST },
    'the client closed the connection before its request was complete',
  );
  reply.code(CLIENT_CLOSED_REQUEST).send();
}

/**
 * A streamed body's client hung up: the upstream call is aborted because of it, and reply-from
 * warns of every aborted call ("response errored") before the gateway can say whose doing it
 * was. Until `recordClientClosedRequest` has, this request logs errors only.
 */
export function quietUntilRecorded(request: FastifyRequest) {
  if (request.quietLogLevel) return;
  request.quietLogLevel = request.log.level;
  request.log.level = 'error';
}

/** Each kind of failed call: the metric's label, the status and a message that says whose fault. */
const FAILURES = {
  connectTimeout: {
    kind: 'unreachable',
    status: 504,
    message: 'The upstream service is unreachable: no connection within the connect timeout',
  },
  timeout: { kind: 'timeout', status: 504, message: 'The upstream service did not answer in time' },
  unreachable: { kind: 'unreachable', status: 502, message: 'The upstream service is unreachable' },
  reset: {
    kind: 'reset',
    status: 502,
    message: 'The connection to the upstream service broke before it answered',
  },
  notSent: {
    kind: 'not_sent',
    status: 500,
    message: 'The gateway could not forward this request (nothing was sent to the service)',
  },
  other: { kind: 'other', status: 502, message: 'The call to the upstream service failed without an answer' },
} as const;

/** reply-from wraps undici's error: the cause's code says what happened. */
function classify(error: Error & { statusCode?: number; code?: string }) {
  const code = (error.cause as { code?: string } | undefined)?.code ?? error.code ?? '';
  const failure =
    code === 'UND_ERR_CONNECT_TIMEOUT'
      ? FAILURES.connectTimeout
      : error.statusCode === 504
        ? FAILURES.timeout
        : NOT_CONNECTED.has(code)
          ? FAILURES.unreachable
          : CONNECTION_BROKE.has(code)
            ? FAILURES.reset
            : NOT_SENDABLE.has(code)
              ? FAILURES.notSent
              : FAILURES.other;
  return { ...failure, code };
}

/** How long the rest of a refused body is read and thrown away before the connection is cut. */
const LINGER_MS = 5_000;

/**
 * A lingering close (as nginx's `lingering_close`): closing a socket that still has unread body
 * bytes makes the kernel send a reset, which can destroy the 413 before the client reads it. So
 * the rest of the body is read and discarded, and the connection is cut only if the client is
 * still sending after LINGER_MS.
 */
function lingerThenClose(request: FastifyRequest) {
  const raw = request.raw;
  if (raw.complete) return;
  const timer = setTimeout(() => raw.socket?.destroy(), LINGER_MS);
  timer.unref();
  raw.once('end', () => clearTimeout(timer));
  raw.resume();
}

/** The service a proxied call goes to (OAuth and SCIM routes have no public route entry: identity). */
export function upstreamServiceOf(request: FastifyRequest): string {
  const route = request.routeOptions.config as { publicRoute?: { service: string } };
  return route.publicRoute?.service ?? 'identity';
}

/**
 * reply-from failures in the envelope. What the gateway or the client caused says so: a body
 * over its limit is 413 naming the limit, a client that hung up mid-body is recorded as 499 (and
 * is no upstream failure). The rest are the upstream's: no connection → 502 (504 when connecting
 * timed out), a connection that broke → 502, no answer in time → 504; each counted by kind.
 */
export function upstreamError(reply: FastifyReply, { error }: { error: Error & { statusCode?: number } }) {
  if (reply.sent) return;
  const request = reply.request;
  if (request.bodyTooLarge) {
    lingerThenClose(request);
    reply.code(413).send(errorBody('PAYLOAD_TOO_LARGE', request.bodyTooLarge));
    return;
  }
  if (clientClosedRequest(request)) {
    recordClientClosedRequest(request, reply);
    return;
  }
  const failure = classify(error);
  const body = errorBody(failure.status === 504 ? 'SERVICE_UNAVAILABLE' : 'SERVER_ERROR', failure.message);
  if (failure.kind === 'not_sent') {
    request.log.error({ err: error.message, code: failure.code }, failure.message);
    reply.code(failure.status).send(body);
    return;
  }
  const service = upstreamServiceOf(request);
  request.log.warn({ err: error.message, code: failure.code, service }, 'upstream call failed');
  upstreamErrors.inc({ service, kind: failure.kind });
  reply.code(failure.status).send(body);
}
