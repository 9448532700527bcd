import { randomUUID } from 'node:crypto';
import type { ErrorCode, ErrorDetail } from '@support-desk/contracts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import secureJson from 'secure-json-parse';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyReply,
  type FastifyInstance,
  type FastifyServerOptions,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify';
import type { Logger } from './logger.js';
import { clientErrorHandler, SERVICE_MAX_HEADER_BYTES } from './client-errors.js';
import { AppError, isAppError } from './errors.js';
import { nulCharacterPath } from './nul-character.js';
import { type AjvError, validationFailure, validatorCompiler } from './validation.js';
import { observeInTrace, tracedHistogram } from './metrics.js';
import { isDatabaseUnreachable } from './mongo.js';
import { isTimeLimitError, storeTimedOut } from './store-deadline.js';
import { activeTraceId } from './telemetry/trace-context.js';

/**
 * Every answer, by route template (never the raw path: ids would explode the label set). The
 * labels are the OpenTelemetry HTTP semantic conventions' attributes, dots as underscores.
 */
const httpDuration = tracedHistogram(
  'http_server_request_duration_seconds',
  'HTTP requests served, by method, route template and status code, and how long they took',
  ['http_request_method', 'http_route', 'http_response_status_code'],
);

/** Retry-After (seconds) on a 503 for an unreachable database: long enough for a failover. */
const DATABASE_RETRY_AFTER_S = 5;

export type HttpApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface HttpAppOptions {
  logger: Logger;
  /** Largest JSON body accepted, in bytes (default 1 MiB). Multipart uploads set their own limit. */
  bodyLimit?: number;
  /** Fastify's trustProxy: which hops may set X-Forwarded-For. */
  trustProxy?: FastifyServerOptions['trustProxy'];
  https?: { cert: string | Buffer; key: string | Buffer } | null;
  /**
   * The longest request line plus headers accepted (a longer one is 431 HEADERS_TOO_LARGE):
   * `SERVICE_MAX_HEADER_BYTES` by default; the gateway, facing clients, `PUBLIC_MAX_HEADER_BYTES`.
   */
  maxHeaderBytes?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const ok = <T>(data: T) => ({ success: true as const, data });

export const errorBody = (code: ErrorCode, message: string, details?: ErrorDetail[]) => ({
  success: false as const,
  error: details && details.length > 0 ? { code, message, details } : { code, message },
});

type ErrorEnvelopeLike = { success: false; error: { requestId?: string } };
const isErrorEnvelope = (payload: unknown): payload is ErrorEnvelopeLike =>
  typeof payload === 'object' &&
  payload !== null &&
  (payload as { success?: unknown }).success === false &&
  typeof (payload as { error?: unknown }).error === 'object' &&
  (payload as { error?: unknown }).error !== null;

/** Maps a status fastify or a plugin set to our code. */
const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  406: 'VALIDATION_ERROR',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

/** What the router refused, without echoing the input. */
function frameworkMessage(error: { code?: string; message: string }): string {
  if (error.code === 'FST_ERR_BAD_URL') return 'The path has malformed percent-encoding';
  if (error.code === 'FST_ERR_ASYNC_CONSTRAINT') return 'The request could not be routed';
  return 'The request is malformed';
}

/**
 * The fastify instance every service (and the gateway) is built on: request ids, one log
 * line per request, JSON-only bodies, and every failure rendered as the error envelope.
 */
declare module 'fastify' {
  interface FastifyInstance {
    /** Every answer from now on says `Connection: close` (the start of a graceful shutdown). */
    startDraining(): void;
  }
  interface FastifyRequest {
    /** The W3C trace the request is served in (null when tracing is off). */
    traceId: string | null;
  }
}

/** A JSON body refused by `parseJsonBody` for a prototype-polluting key. */
export const isPrototypePoisoning = (error: Error) =>
  error instanceof SyntaxError && /forbidden prototype property/.test(error.message);

/**
 * Parses a JSON body as fastify does (secure-json-parse, its own dependency): a key `__proto__`,
 * or `constructor` with a `prototype` inside, is a SyntaxError (`isPrototypePoisoning`) before any
 * code sees the body, so nothing that copies or walks it can reach Object.prototype.
 */
export const parseJsonBody = (text: string): unknown =>
  secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' });

/** A fastify content-type parser (`parseAs: 'string'`) of JSON bodies with `parseJsonBody`. */
export function jsonBodyParser(
  _request: unknown,
  body: string | Buffer,
  done: (err: Error | null, body?: unknown) => void,
): void {
  const text = String(body);
  if (text === '')
    return done(
      Object.assign(new Error('empty body'), { code: 'FST_ERR_CTP_EMPTY_JSON_BODY', statusCode: 400 }),
    );
  let parsed: unknown;
  try {
    parsed = parseJsonBody(text);
  } catch (err) {
    return done(Object.assign(err as Error, { statusCode: 400 }));
  }
  done(null, parsed);
}

export const PROTOTYPE_KEYS_REFUSED =
  'body holds a key named __proto__, or constructor with a prototype inside: such keys are never accepted';

export function createHttpApp({
  logger,
  bodyLimit = 1024 * 1024,
  trustProxy,
  https,
  maxHeaderBytes = SERVICE_MAX_HEADER_BYTES,
}: HttpAppOptions): HttpApp {
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit,
    trustProxy: trustProxy ?? false,
    // One line per request is written by the onResponse hook below, not fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // A call that reaches the listener while it closes (a connection accepted before the listener
    // ends) is served like any other, with `Connection: close`: the drain before `close()` has
    // already moved traffic elsewhere, and a bare 503 would fail a write in a rolling restart.
    return503OnClosing: false,
    // The router's own refusals (a path with malformed percent-encoding, a header too large)
    // in the envelope like every other answer.
    frameworkErrors: (error, _request, reply: FastifyReply) => {
      const status = error.statusCode ?? 400;
      reply
        .code(status)
        .send(errorBody(status >= 500 ? 'SERVER_ERROR' : 'VALIDATION_ERROR', frameworkMessage(error)));
    },
    clientErrorHandler: clientErrorHandler(maxHeaderBytes),
    ...(https
      ? { https: { ...https, maxHeaderSize: maxHeaderBytes } }
      : { http: { maxHeaderSize: maxHeaderBytes } }),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as HttpApp;

  app.setValidatorCompiler(validatorCompiler);

  // JSON only: text/plain and friends get 415 rather than a string body.
  app.removeContentTypeParser('text/plain');
  // Fastify's parser with the same rules, but one whose refusal says why (fastify's says only
  // "invalid JSON" when a key `__proto__` was the reason).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser);

  // From the start of a drain (see `serve`) and during shutdown, ask keep-alive clients to go
  // away, so no request can arrive on a connection the closing listener is about to drop.
  let closing = false;
  app.decorate('startDraining', () => {
    closing = true;
  });
  app.addHook('preClose', async () => {
    closing = true;
  });

  // The hooks every call runs are callback-style where they do nothing asynchronous: an async
  // hook costs a promise and a microtask turn per call (≈ 1 µs each on the bench's machine).

  // Before validation, so a NUL character is named as such (see nul-character.ts).
  app.addHook('preValidation', (request, _reply, done) => {
    const where =
      nulCharacterPath(request.params, 'path') ??
      nulCharacterPath(request.query, 'query') ??
      nulCharacterPath(request.body, 'body');
    done(
      where
        ? new AppError('VALIDATION_ERROR', `${where} must not contain the NUL character (U+0000)`)
        : undefined,
    );
  });

  app.decorateRequest('traceId', null);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // The request line is written after the answer, outside the request's trace context.
    request.traceId = activeTraceId() ?? null;
    done();
  });

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Every error body names the call (`error.requestId`, the `X-Request-Id` header's value), so a
  // client can quote it; one place for every error any handler, hook or plugin sends.
  app.addHook('preSerialization', (request, _reply, payload, done) => {
    done(
      null,
      isErrorEnvelope(payload) && payload.error.requestId === undefined
        ? { ...payload, error: { ...payload.error, requestId: request.id } }
        : payload,
    );
  });

  // The line per request names only the call (method, path without its query, status, time,
  // ids), never a field the redaction paths name, so it is written by a child without redaction:
  // pino runs a logger's `*.x` redaction paths over every field of every line, which cost the
  // line more than half its price (≈ 4 µs of 8). Written only when the request's own logger
  // would (its level can be lowered per request), with the same fields as a line of `request.log`.
  const requestLines = logger.child({}, { redact: [] });
  app.addHook('onResponse', (request, reply, done) => {
    observeInTrace(
      httpDuration,
      {
        http_request_method: request.method,
        http_route: request.routeOptions.url ?? 'unmatched',
        http_response_status_code: reply.statusCode,
      },
      reply.elapsedTime / 1000,
      request.traceId,
    );
    if ((request.log as Logger).isLevelEnabled('info')) {
      const queryAt = request.url.indexOf('?');
      requestLines.info(
        {
          reqId: request.id,
          method: request.method,
          url: queryAt < 0 ? request.url : request.url.slice(0, queryAt),
          statusCode: reply.statusCode,
          responseTime: Math.round(reply.elapsedTime * 10) / 10,
          ...(request.traceId ? { traceId: request.traceId } : {}),
        },
        'request completed',
      );
    }
    done();
  });

  app.setNotFoundHandler(async (request, reply) => {
    return reply
      .code(404)
      .send(errorBody('NOT_FOUND', `Route ${request.method} ${request.url.split('?')[0]} not found`));
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const failure = error.validation
      ? validationFailure(error.validation as AjvError[], error.validationContext)
      : isTimeLimitError(error)
        ? storeTimedOut()
        : error;
    if (isAppError(failure)) {
      return reply
        .code(failure.statusCode)
        .headers(failure.headers)
        .send(errorBody(failure.code, failure.message, failure.details));
    }
    if (isPrototypePoisoning(error)) {
      return reply.code(400).send(errorBody('VALIDATION_ERROR', PROTOTYPE_KEYS_REFUSED));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError) {
      return reply.code(400).send(errorBody('VALIDATION_ERROR', 'body is not valid JSON'));
    }
    if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return reply
        .code(400)
        .send(errorBody('VALIDATION_ERROR', 'body is empty but Content-Type is application/json'));
    }
    const unreachable = isDatabaseUnreachable(error);
    const status = unreachable ? 503 : (error.statusCode ?? 500);
    const code = CODE_FOR_STATUS[status];
    if (status < 500 && code) {
      return reply.code(status).send(errorBody(code, publicMessage(error, status)));
    }
    const errorId = randomUUID();
    request.log.error({ err: error, errorId }, unreachable ? 'database unreachable' : 'unhandled error');
    if (status !== 503) {
      return reply.code(500).send(errorBody('SERVER_ERROR', `Internal server error (error id ${errorId})`));
    }
    if (unreachable) reply.header('retry-after', String(DATABASE_RETRY_AFTER_S));
    const cause = unreachable ? "The service's database is unreachable; retry later" : 'Service unavailable';
    return reply.code(503).send(errorBody('SERVICE_UNAVAILABLE', `${cause} (error id ${errorId})`));
  });

  return app;
}

function publicMessage(error: FastifyError, status: number): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type; send application/json';
    default:
      // Framework 4xx messages are written for clients and carry no internals.
      return error.message || `Request failed with status ${status}`;
  }
}
