import { Readable, Transform } from 'node:stream';
import { BalancedPool, Pool } from 'undici';
import type { UpstreamHealth } from './upstream-health.js';
import type { FastifyReplyFromHooks } from '@fastify/reply-from';
import { FORWARDED_HEADER, INTERNAL_HEADERS, PRINCIPAL_HEADER } from '@support-desk/contracts';
import { AppError, traceContextHeaders } from '@support-desk/platform/core';
import { CALL_TIMEOUT_HEADER } from '@support-desk/platform/http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayConfig } from '../config.js';
import { upstreamAnswers } from '../metrics.js';
import { upstreamBudgetHeader } from './admission.js';
import {
  clientClosedRequest,
  CONNECTION_BROKE,
  NOT_CONNECTED,
  quietUntilRecorded,
  upstreamError,
  upstreamServiceOf,
} from './upstream-errors.js';

/**
 * undici pool options shared by every upstream: keep-alive, bounded connect and response waits.
 * (With several replicas of a service, @fastify/reply-from spreads calls over them with undici's
 * BalancedPool, built from the same options.)
 */
function poolOptions(config: GatewayConfig) {
  return {
    connections: config.UPSTREAM_CONNECTIONS,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    connect: { timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS },
    headersTimeout: config.UPSTREAM_TIMEOUT_MS,
    bodyTimeout: config.UPSTREAM_TIMEOUT_MS,
  };
}

/** A write pool's idle bound (see `upstreamPool`); the service's `Keep-Alive` hint cannot lengthen it. */
function writePoolOptions(config: GatewayConfig) {
  const idle = config.UPSTREAM_WRITE_IDLE_MS;
  return idle === 0 ? { pipelining: 0 } : { keepAliveTimeout: idle, keepAliveMaxTimeout: idle };
}

/** A 413 that names the limit in human units (`attachments are limited to 25 MiB`). */
export const payloadTooLarge = (message: string) => new AppError('PAYLOAD_TOO_LARGE', message);

/**
 * A scope whose bodies fastify limits (`bodyLimit`) answers its 413 with `message` (the limit in
 * human units) instead of the framework's generic one; every other error goes on to the app's
 * handler.
 */
export function nameBodyLimit(
  scope: FastifyInstance,
  message: string,
  send?: (reply: FastifyReply) => unknown,
) {
  scope.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
    if (send) return send(reply);
    throw payloadTooLarge(message);
  });
}

/**
 * Passes the body through while counting it: over `limit` bytes the stream errors, the upstream
 * call is aborted and the client gets 413 (no buffering, whatever Content-Length claimed).
 */
export function limitStream(
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
  limit: number,
  message: string,
) {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      seen += chunk.length;
      if (seen > limit) {
        request.bodyTooLarge = message;
        callback(payloadTooLarge(message));
        return;
      }
      callback(null, chunk);
    },
  });
  payload.on('error', (err) => {
    if (clientClosedRequest(request)) quietUntilRecorded(request);
    counter.destroy(err);
  });
  return payload.pipe(counter);
}

/** Reads a small body whole (over `limit` bytes: 413), so it can be sent again on a retry. */
export function bufferBody(
  payload: NodeJS.ReadableStream,
  limit: number,
  message: string,
  done: (err: Error | null, body?: Buffer) => void,
) {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    done(err, body);
  };
  payload.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limit) {
      finish(payloadTooLarge(message));
      return;
    }
    if (!finished) chunks.push(chunk);
  });
  payload.on('end', () => finish(null, Buffer.concat(chunks)));
  payload.on('error', (err: Error) => finish(err));
}

/**
 * Hop-by-hop request headers (RFC 9110 §7.6.1) describe the client's connection to the gateway,
 * not the call, and are never forwarded: the gateway's own connection to the service has its own
 * framing and keep-alive (undici refuses to send most of them: an `Expect`, `Transfer-Encoding`,
 * `Upgrade` or `Keep-Alive` from the client made every such call fail). reply-from also removes
 * the headers `Connection` names. `Expect: 100-continue` is met here: Node's server sends the
 * 100 Continue when the request arrives, before the gateway reads the body (other expectations
 * are refused, see `refuseUnservable`).
 */
const HOP_BY_HOP = [
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'transfer-encoding',
  'upgrade',
];

/** Internal and hop-by-hop headers never come from a client; the credential stays at the gateway. */
function upstreamHeaders(request: FastifyRequest, headers: Record<string, unknown>, keepAuth: boolean) {
  const out: Record<string, unknown> = { ...headers };
  for (const h of INTERNAL_HEADERS) delete out[h];
  for (const h of HOP_BY_HOP) delete out[h];
  // When tracing runs, the trace context is the gateway's own span's, which the instrumentation
  // adds: the caller's copy would make a second, conflicting `traceparent`.
  for (const h of traceContextHeaders()) delete out[h];
  if (!keepAuth) delete out.authorization;
  // The budget is the gateway's to give (a client's own copy is dropped): see admission.ts.
  delete out[CALL_TIMEOUT_HEADER];
  Object.assign(out, upstreamBudgetHeader(request));
  out['x-request-id'] = request.id;
  out['x-forwarded-for'] = request.ip;
  out['x-forwarded-proto'] = request.protocol;
  if (request.principalAssertion) out[PRINCIPAL_HEADER] = request.principalAssertion;
  if (request.forwardedAssertion) out[FORWARDED_HEADER] = request.forwardedAssertion;
  return out;
}

const IDEMPOTENT = new Set(['GET', 'HEAD']);
const RETRIES = 4;

/**
 * reply-from's retry decision (a delay in ms, or null). A call is tried again — on another
 * replica, which the BalancedPool picks after an error — only when that cannot do a thing twice:
 * when the connection was refused (a replica shutting down or gone; nothing reached it, any
 * method), or when a connection broke under a GET or HEAD. Never for a streamed upload (its body
 * cannot be read twice), and never on an answer: a 503 or 504 from a service goes back to the
 * client, and a gateway must not multiply load. At most four times, 1–31 ms apart.
 */
const retryOnAnotherReplica = ({
  err,
  req,
  attempt,
}: {
  err?: Error & { code?: string };
  req: { method?: string; body?: unknown };
  attempt: number;
}): number | null => {
  if (!err || attempt >= RETRIES) return null;
  const code = err.code ?? (err.cause as { code?: string } | undefined)?.code ?? '';
  if (req.body instanceof DeferredBody) {
    // An upload goes again only if none of it was read: reply-from sends `req.body` again.
    const fresh = NOT_CONNECTED.has(code) ? req.body.again() : null;
    if (!fresh) return null;
    req.body = fresh;
    return 1 + attempt * 10;
  }
  // A read body goes again as the same bytes, by the rules of a buffered one below.
  if (req.body instanceof BufferedBody) req.body = req.body.again();
  else if (req.body !== undefined && typeof (req.body as { pipe?: unknown }).pipe === 'function') return null;
  if (NOT_CONNECTED.has(code)) return 1 + attempt * 10;
  if (CONNECTION_BROKE.has(code) && IDEMPOTENT.has(req.method ?? '')) return 1 + attempt * 10;
  return null;
};

/** Calls a service answered (reply-from rewrites the answer's headers): the rest the gateway answered. */
const answered = new WeakSet<object>();

/**
 * The `onResponse` hook of every proxying scope: a service's answer counted by its status code
 * once sent (the gateway's own refusals are not the service's; calls that got no answer are
 * `gateway_upstream_errors_total`), for the per-service upstream alert.
 */
export function countUpstreamAnswer(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  if (answered.has(request)) {
    upstreamAnswers.inc({
      service: upstreamServiceOf(request),
      http_response_status_code: String(reply.statusCode),
    });
  }
  done();
}

type RewriteHeaders = (headers: IncomingHttpHeaders, request: FastifyRequest) => IncomingHttpHeaders;

/**
 * reply-from hooks for one kind of route: header rewrite (`rewrite`, the route kind's own, after the
 * answer is noted for `countUpstreamAnswer`), envelope errors, safe retries only.
 */
export function fromOptions(keepAuth: boolean, rewrite?: RewriteHeaders): FastifyReplyFromHooks {
  return {
    rewriteHeaders: ((headers: IncomingHttpHeaders, request: FastifyRequest) => {
      answered.add(request);
      return rewrite ? rewrite(headers, request) : headers;
    }) as FastifyReplyFromHooks['rewriteHeaders'],
    rewriteRequestHeaders: (req, headers) =>
      upstreamHeaders(req as FastifyRequest, headers, keepAuth) as typeof headers,
    onError: (reply, e) => upstreamError(reply as unknown as FastifyReply, e),
    retryDelay: retryOnAnotherReplica as FastifyReplyFromHooks['retryDelay'],
  };
}

/** Methods that change something: not safe to send twice once a service may have seen them. */
export const isUnsafe = (method: string) => method !== 'GET' && method !== 'HEAD';

/**
 * What reply-from needs to reach one service: its base URL(s), and the pool. Several replicas
 * are balanced by undici's BalancedPool (handed to reply-from and @fastify/http-proxy as the
 * dispatcher).
 *
 * A pool for `writes` (calls that change something, which must never be sent twice) keeps its
 * connections alive only `UPSTREAM_WRITE_IDLE_MS` between calls, so the gateway, never the
 * service, closes an idle one: a draining service answers `Connection: close` for its whole
 * `SHUTDOWN_DRAIN_MS` (1 s, longer than that idle time) before its listener closes the
 * connections left idle, and by then the gateway has closed every connection it could still
 * send a write on. A write is therefore either refused before anything is sent (a closed
 * listener; it goes to another replica) or answered. A fresh connection per write would be as
 * safe, at twice the gateway's CPU per create (BENCHMARKS.md); 0 brings it back. Read pools
 * keep connections as long as the service's `Keep-Alive` hint allows: a GET whose connection
 * broke is simply sent again.
 */
export function upstreamPool(
  config: GatewayConfig,
  urls: string[],
  {
    writes = false,
    health,
    service = '',
  }: { writes?: boolean; health?: UpstreamHealth; service?: string } = {},
) {
  const options = { ...poolOptions(config), ...(writes ? writePoolOptions(config) : {}) };
  const origins = urls.map((u) => new URL(u).origin);
  if (origins.length === 1) return { base: urls[0], undici: new Pool(origins[0], options) };
  const pool = new BalancedPool(origins, options);
  health?.watch(service, origins, pool);
  return { base: urls[0], undici: pool };
}

/**
 * An upload's body, read from the client only once undici starts sending it on a connection. A
 * call refused before that (the replica was gone) leaves the client's stream untouched, and
 * `again()` hands a fresh wrapper of it to the next attempt.
 */
export class DeferredBody extends Readable {
  started = false;

  constructor(private readonly source: Readable) {
    super();
  }

  override _read(): void {
    if (this.started) {
      this.source.resume();
      return;
    }
    this.started = true;
    this.source.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) this.source.pause();
    });
    this.source.once('end', () => this.push(null));
    this.source.once('error', (err) => this.destroy(err));
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Unread, the client's stream stays whole for another attempt; read, it is spent with this one.
    if (this.started) this.source.destroy(err ?? undefined);
    callback(err);
  }

  /** A new wrapper of the same, still unread stream (null once any of it was read). */
  again(): DeferredBody | null {
    return this.started ? null : new DeferredBody(this.source);
  }
}

/**
 * A body read whole (OAuth, console and SCIM calls), sent on as a stream of its exact bytes: the
 * bytes the forwarding assertion's digest names. (reply-from would JSON-encode a string body of a
 * JSON type once more.) Unlike an upload, it can be sent again on another attempt.
 */
export class BufferedBody extends Readable {
  constructor(readonly bytes: Buffer) {
    super();
    this.push(bytes);
    this.push(null);
  }

  override _read(): void {}

  again(): BufferedBody {
    return new BufferedBody(this.bytes);
  }
}
