import type { Readable } from 'node:stream';
import { errorBody } from '@support-desk/platform/http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { idempotencyOutcomes } from '../metrics.js';
import type { IdempotencyStore, StoredAnswer } from '../store/idempotency-store.js';
import { fingerprint, invalidIdempotencyKey } from '../use-cases/idempotency.js';
import { isUpload } from '../use-cases/route-table.js';

/** The headers that describe a stored body, replayed with it (the rest belong to each call). */
const REPLAYED_HEADERS = ['content-type', 'location', 'etag', 'last-modified'];
/** Retry-After (seconds) on a 409 for a key whose first call is still running. */
const IN_PROGRESS_RETRY_AFTER_S = 1;

const EMPTY = Buffer.alloc(0);

function describedBy(request: FastifyRequest) {
  const route = request.routeOptions.config.publicRoute!;
  const upload = isUpload(route);
  const body = request.body;
  return fingerprint({
    method: request.method,
    url: request.forwardUrl,
    mediaType: String(request.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase(),
    body: upload ? null : Buffer.isBuffer(body) ? body : EMPTY,
    contentLength: upload ? (request.headers['content-length'] ?? null) : null,
  });
}

function replay(reply: FastifyReply, answer: StoredAnswer) {
  return reply
    .code(answer.status)
    .headers(answer.headers)
    .header('idempotent-replayed', 'true')
    .send(answer.body);
}

/**
 * Idempotency-Key on the public POST and PATCH routes (Stripe's model), after authentication,
 * rate limit (a replay is a call like any other and counts) and scope, once the body is read:
 *
 * - the first call with a key claims it and runs; its answer (status, body, the headers that
 *   describe the body) is stored per credential and key for IDEMPOTENCY_TTL_SECONDS, 4xx
 *   included; a 5xx is not stored (the claim is dropped: a retry runs again);
 * - a later call with the same key and the same request gets the stored answer again, with
 *   `Idempotent-Replayed: true`; with a different request, 422 IDEMPOTENCY_KEY_REUSED;
 * - while the first call runs, 409 CONFLICT with Retry-After;
 * - a key that is empty, longer than 255 characters or not printable ASCII: 400.
 *
 * Without the header nothing changes. Redis unreachable: 503 (the caller asked for a guarantee
 * the gateway cannot give without it).
 */
export function idempotencyHooks(store: IdempotencyStore) {
  const refuse = (
    reply: FastifyReply,
    outcome: string,
    status: number,
    ...body: Parameters<typeof errorBody>
  ) => {
    idempotencyOutcomes.inc({ outcome });
    return reply.code(status).send(errorBody(...body));
  };

  async function preHandler(request: FastifyRequest, reply: FastifyReply) {
    const key = request.headers['idempotency-key'];
    if (key === undefined) return;
    const why = invalidIdempotencyKey(Array.isArray(key) ? key.join(', ') : key);
    if (why) return refuse(reply, 'invalid', 400, 'VALIDATION_ERROR', why);
    const credential = request.caller!.rateSubject;
    const sent = describedBy(request);
    let outcome: Awaited<ReturnType<IdempotencyStore['claim']>>;
    try {
      outcome = await store.claim(credential, key as string, sent);
    } catch (err) {
      request.log.warn({ err: (err as Error).message }, 'idempotency store unavailable');
      reply.header('retry-after', String(IN_PROGRESS_RETRY_AFTER_S));
      return refuse(
        reply,
        'unavailable',
        503,
        'SERVICE_UNAVAILABLE',
        'Idempotency keys are unavailable; retry later',
      );
    }
    if (outcome.kind === 'claimed') {
      idempotencyOutcomes.inc({ outcome: 'claimed' });
      request.idempotency = { credential, key: key as string, claim: outcome.claim };
      return;
    }
    if (outcome.fingerprint !== sent) {
      return refuse(
        reply,
        'reused',
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was already used for a different request (method, path, query or body); use a new key for a new request',
      );
    }
    if (outcome.kind === 'running') {
      reply.header('retry-after', String(IN_PROGRESS_RETRY_AFTER_S));
      return refuse(
        reply,
        'in_progress',
        409,
        'CONFLICT',
        `A request with this Idempotency-Key is still being processed; retry after ${IN_PROGRESS_RETRY_AFTER_S} s`,
      );
    }
    idempotencyOutcomes.inc({ outcome: 'replayed' });
    return replay(reply, outcome.answer);
  }

  /**
   * reply-from's answer handler for a call holding a claim: the body is read whole (answers to
   * writes are small), so it can be stored as sent; other calls stream as usual.
   */
  function onResponse(request: FastifyRequest, reply: FastifyReply, res: { stream: Readable }) {
    if (!request.idempotency) {
      reply.send(res.stream);
      return;
    }
    const chunks: Buffer[] = [];
    res.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.stream.once('end', () => {
      reply.removeHeader('transfer-encoding');
      reply.send(Buffer.concat(chunks));
    });
    res.stream.once('error', () => {
      reply.removeHeader('transfer-encoding');
      reply.removeHeader('content-length');
      reply
        .code(502)
        .send(errorBody('SERVER_ERROR', 'The connection to the upstream service broke before it answered'));
    });
  }

  /** Stores the answer of a call holding a claim before it is sent (so a retry finds it), or drops the claim on a 5xx. */
  async function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const held = request.idempotency;
    if (!held) return payload;
    request.idempotency = undefined;
    try {
      if (reply.statusCode >= 500 || !(typeof payload === 'string' || Buffer.isBuffer(payload))) {
        await store.release(held.credential, held.key, held.claim);
        return payload;
      }
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
      await store.complete(held.credential, held.key, held.claim, {
        status: reply.statusCode,
        headers,
        body,
      });
    } catch (err) {
      // The claim expires on its own; a retry after that runs again (see the README).
      request.log.warn({ err: (err as Error).message }, 'idempotency answer not stored');
    }
    return payload;
  }

  return { preHandler, onResponse, onSend };
}
