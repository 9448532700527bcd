import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { EVENT_TYPES, isEventType, type WebhookWithSecret } from '@support-desk/contracts';
import type { Deps, EventContext } from '@support-desk/identity/admin';
import { AppError, eventPatternsFrom } from '@support-desk/platform';
import { Webhook } from 'standardwebhooks';
import { required, UsageError } from '../args.js';
import { type CliNats, type Run, when } from '../command.js';
import { cliIo } from '../io.js';
import { ask } from './webhooks.js';

/*
 * `deskctl webhooks listen` and `deskctl webhooks trigger`: developing a webhook receiver on one's
 * own machine without exposing it, as `stripe listen --forward-to` and `stripe trigger` do. The
 * listener receives on a loopback port of its own through a temporary subscription, verifies each
 * delivery with the same library the service signs with (standardwebhooks), forwards it to the
 * local receiver with its original headers, answers the service with the receiver's answer (so
 * retries happen as they would against the receiver itself) and deletes the subscription when it
 * stops.
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
interface Seen {
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

function lineOf(s: Seen): string {
  const head = `${when(s.at)}  ${s.type ?? '-'}  ${s.eventId ?? '-'}  ${s.deliveryId ?? '-'}`;
  if (s.refused) return `${head}  refused: ${s.refused} (answered ${s.answered}, not forwarded)`;
  if (s.error) return `${head}  -> ${s.error} (answered ${s.answered})`;
  return `${head}  -> ${s.status} in ${s.latencyMs} ms${s.test ? '  (test event)' : ''}`;
}

function forwardUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--forward-to "${raw}" is not a URL (http://localhost:3000/hooks)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError('--forward-to must be an http:// or https:// URL');
  return url;
}

function portOf(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^\d{1,5}$/.test(value) || Number(value) > 65_535)
    throw new UsageError('--port must be a port number (0 to 65535; 0: any free port)');
  return Number(value);
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
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
async function forward(target: URL, req: IncomingMessage, body: string) {
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

/** Resolves on the first SIGINT, SIGTERM or SIGHUP; the handlers are removed by `done()`. */
function stopSignal() {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  let stop!: (signal: string) => void;
  const stopped = new Promise<string>((r) => (stop = r));
  for (const s of signals) process.on(s, stop);
  return { stopped, done: () => signals.forEach((s) => process.off(s, stop)) };
}

function listenOn(server: Server, port: number) {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE' ? new UsageError(`--port ${port}: the port is in use on 127.0.0.1`) : err,
      ),
    );
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * The temporary subscription to the listener's loopback URL. A service that does not admit a
 * loopback receiver (a deployment's default) says why, and the operator is told what admits one.
 */
async function subscribe(
  deps: Deps,
  nats: CliNats | null,
  ctx: EventContext,
  url: string,
  events: string[],
  target: URL,
) {
  const description = `deskctl webhooks listen (temporary: deleted when it stops) on ${hostname()} pid ${process.pid}, forwarding to ${target.href}`;
  try {
    return (await ask(deps, nats, ctx, 'create', { url, events, description: description.slice(0, 500) }))
      .webhook;
  } catch (err) {
    if (err instanceof AppError && /body\.url/.test(err.message))
      throw new AppError(
        'VALIDATION_ERROR',
        `the webhooks service does not admit a loopback receiver (${url}): ${err.message}. ` +
          'Local development only: set WEBHOOKS_ALLOWED_RANGES=127.0.0.0/8,::1/128 on the webhooks service (npm start does).',
      );
    throw err;
  }
}

async function listen(
  deps: Deps,
  ctx: EventContext,
  v: Record<string, unknown>,
  nats: CliNats | null,
  json: boolean,
) {
  const target = forwardUrl(required(v, 'forward-to'));
  const port = portOf(v.port);
  const events = eventPatternsFrom(typeof v.events === 'string' ? v.events : '*');
  const out = cliIo().stdout;
  let subscription: WebhookWithSecret | undefined;
  let setVerifier!: (w: Webhook) => void;
  const verifier = new Promise<Webhook>((r) => (setVerifier = r));
  const counts = { forwarded: 0, failed: 0, refused: 0 };
  const print = (s: Seen) => out.write(`${json ? JSON.stringify(s) : lineOf(s)}\n`);

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const at = new Date().toISOString();
    const deliveryId = typeof req.headers['webhook-id'] === 'string' ? req.headers['webhook-id'] : null;
    const body = await readBody(req);
    let payload: unknown;
    try {
      payload = (await verifier).verify(body, headersOf(req));
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
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end();
      cliIo().stderr.write(`deskctl: warning: a delivery could not be handled: ${(err as Error).message}\n`);
    });
  });
  const signal = stopSignal();
  try {
    const bound = await listenOn(server, port);
    const url = `http://127.0.0.1:${bound}/`;
    subscription = await subscribe(deps, nats, ctx, url, events, target);
    setVerifier(new Webhook(subscription.secret));
    const ready = {
      listening: {
        webhookId: subscription.id,
        url,
        events,
        forwardTo: target.href,
        secret: subscription.secret,
      },
    };
    out.write(
      json
        ? `${JSON.stringify(ready)}\n`
        : [
            `Ready: deliveries of ${events.join(', ')} go to ${url} and on to ${target.href}`,
            `  temporary subscription ${subscription.id} (deleted when this stops: ^C)`,
            `  signing secret ${subscription.secret} (your receiver verifies with it)`,
            '',
          ].join('\n'),
    );
    const by = await signal.stopped;
    return { by, subscriptionId: subscription.id, counts };
  } finally {
    signal.done();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    if (subscription) await unsubscribe(deps, nats, ctx, subscription.id);
  }
}

/** The temporary subscription goes with the listener; if it cannot, the operator is told how. */
async function unsubscribe(deps: Deps, nats: CliNats | null, ctx: EventContext, id: string) {
  try {
    await ask(deps, nats, ctx, 'delete', { id });
  } catch (err) {
    throw new Error(
      `the temporary subscription ${id} could not be deleted (${(err as Error).message}); ` +
        `delete it with: deskctl webhooks delete ${id} --yes`,
      { cause: err },
    );
  }
}

export const runs: Record<string, Run> = {
  async 'webhooks listen'(deps, ctx, v, _pos, nats, globals) {
    const { by, subscriptionId, counts } = await listen(deps, ctx, v, nats, globals?.output === 'json');
    return {
      json: { stopped: by, webhookId: subscriptionId, deleted: true, ...counts },
      text:
        `${by}: deleted the temporary subscription ${subscriptionId} ` +
        `(${counts.forwarded} forwarded, ${counts.failed} not answered, ${counts.refused} refused)`,
    };
  },
  async 'webhooks trigger'(deps, ctx, v, pos, nats) {
    const type = pos[0];
    if (!isEventType(type))
      throw new UsageError(`"${type}" is not an event type; the catalogue: ${EVENT_TYPES.join(', ')}`);
    const webhookId = typeof v.webhook === 'string' ? v.webhook : undefined;
    const r = await ask(deps, nats, ctx, 'trigger', { type, ...(webhookId && { webhookId }) });
    const to = r.deliveries.map((d) => `  ${d.id} to ${d.webhookId}`);
    return {
      json: r,
      text: r.deliveries.length
        ? [`test event ${r.event.id} (${type}) queued for ${to.length} subscription(s):`, ...to].join('\n')
        : `test event ${r.event.id} (${type}): no active subscription takes ${type}; nothing was sent`,
    };
  },
};
