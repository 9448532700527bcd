import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Webhook } from 'standardwebhooks';
import { when } from '../command.js';

/*
 * What `deskctl webhooks listen` does with each request that reaches its port: verify it as a
 * delivery of its subscription (the service's own library, standardwebhooks), pass it on to the
 * local receiver with its original headers, answer the service with what the receiver answered
 * (502/504 when it did not), and report it as one line.
 */

/** Longer than this, the receiver is given up on and the service answered 504 (its own limit is 15 s). */
const FORWARD_TIMEOUT_MS = 10_000;
/** A delivery is a few kB; anything much larger is not one. */
const MAX_BODY_BYTES = 1_048_576;
/** What of the receiver's answer is passed back (the service keeps only the first 1 kB anyway). */
const MAX_ANSWER_BYTES = 65_536;
/** Not passed on: they describe one connection, not the delivery (RFC 9110 §7.6.1), or fetch sets them. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'host',
  'content-length',
]);

/** One delivery as the listener saw it: printed as a line (or a JSON line with --json). */
export interface Seen {
  at: string;
  deliveryId: string | null;
  type: string | null;
  eventId: string | null;
  test?: boolean;
  /** The receiver's status and how long it took, or why there was none. */
  status?: number;
  latencyMs?: number;
  error?: string;
  /** Not forwarded: the signature did not verify (or there was none). */
  refused?: string;
  /** What the service was answered. */
  answered: number;
}

export function lineOf(s: Seen): string {
  const head = `${when(s.at)}  ${s.type ?? '-'}  ${s.eventId ?? '-'}  ${s.deliveryId ?? '-'}`;
  if (s.refused) return `${head}  refused: ${s.refused} (answered ${s.answered}, not forwarded)`;
  if (s.error) return `${head}  -> ${s.error} (answered ${s.answered})`;
  return `${head}  -> ${s.status} in ${s.latencyMs} ms${s.test ? '  (test event)' : ''}`;
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const headersOf = (req: IncomingMessage) =>
  Object.fromEntries(
    Object.entries(req.headers)
      .filter(([name, v]) => v !== undefined && !HOP_BY_HOP.has(name))
      .map(([name, v]) => [name, Array.isArray(v) ? v.join(', ') : String(v)]),
  );

/** Why a forward got no answer, in a few words (`connect ECONNREFUSED 127.0.0.1:3000`, a timeout). */
function failureOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { message?: string } };
  if (e.name === 'TimeoutError') return `no answer in ${FORWARD_TIMEOUT_MS / 1000} s`;
  // fetch says only "fetch failed"; what happened is its cause's message.
  return `no answer: ${e.cause?.message || e.message || String(err)}`;
}

/** The receiver's answer, or the error that stood for it; what the service is answered. */
async function forward(target: URL, req: IncomingMessage, body: Buffer) {
  const started = performance.now();
  try {
    const res = await fetch(target, {
      method: req.method,
      headers: headersOf(req),
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const answer = Buffer.from(await res.arrayBuffer()).subarray(0, MAX_ANSWER_BYTES);
    const latencyMs = Math.round(performance.now() - started);
    return {
      ok: true as const,
      status: res.status,
      latencyMs,
      answer,
      contentType: res.headers.get('content-type'),
    };
  } catch (err) {
    const timedOut = (err as { name?: string }).name === 'TimeoutError';
    return { ok: false as const, error: failureOf(err), answered: timedOut ? 504 : 502 };
  }
}

/** The payload's fields a line shows; an unverified body is never parsed. */
const fieldsOf = (payload: unknown) => {
  const p = (payload ?? {}) as { id?: unknown; type?: unknown; test?: unknown };
  return {
    type: typeof p.type === 'string' ? p.type : null,
    eventId: typeof p.id === 'string' ? p.id : null,
    ...(p.test === true && { test: true }),
  };
};

/** How many deliveries went on, found no receiver, were refused. */
export interface Counts {
  forwarded: number;
  failed: number;
  refused: number;
}

/**
 * The listener's request handler: `verifier` is the subscription's (it resolves once the
 * subscription is made, so a delivery that came first waits for it), `target` the receiver.
 */
export function deliveryHandler(
  verifier: Promise<Webhook>,
  target: URL,
  print: (seen: Seen) => void,
  counts: Counts,
) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const at = new Date().toISOString();
    const deliveryId = typeof req.headers['webhook-id'] === 'string' ? req.headers['webhook-id'] : null;
    const body = await readBody(req); // forwarded as received, byte for byte
    let payload: unknown;
    try {
      payload = (await verifier).verify(body.toString('utf8'), headersOf(req));
    } catch (err) {
      counts.refused++;
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'invalid signature' }));
      const why = (err as Error).message || 'invalid signature';
      return print({
        at,
        deliveryId,
        type: null,
        eventId: null,
        refused: `signature: ${why}`,
        answered: 400,
      });
    }
    const fields = fieldsOf(payload);
    const answer = await forward(target, req, body);
    if (!answer.ok) {
      counts.failed++;
      res.writeHead(answer.answered, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: `forward to ${target.href} failed: ${answer.error}` }));
      return print({ at, deliveryId, ...fields, error: answer.error, answered: answer.answered });
    }
    counts.forwarded++;
    res.writeHead(answer.status, answer.contentType ? { 'content-type': answer.contentType } : {});
    res.end(answer.answer);
    print({
      at,
      deliveryId,
      ...fields,
      status: answer.status,
      latencyMs: answer.latencyMs,
      answered: answer.status,
    });
  };
}
