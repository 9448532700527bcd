import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { EVENT_TYPES, isEventType, type WebhookWithSecret } from '@support-desk/contracts';
import type { Deps, EventContext } from '@support-desk/identity/admin';
import { AppError } from '@support-desk/platform/core';
import { eventPatternsFrom } from '@support-desk/platform/clients';
import { Webhook } from 'standardwebhooks';
import { required, UsageError } from '../args.js';
import { type CliNats, type Run } from '../command.js';
import { cliIo } from '../io.js';
import { type Counts, deliveryHandler, lineOf, type Seen } from './webhook-relay.js';
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

/**
 * The temporary subscription expires a day ahead and a running listener pushes that back every
 * 12 hours (each push is a change, so an event): a listener that dies without deleting it
 * (`kill -9`, a crash) leaves it for at most a day, when the service's housekeeping deletes it.
 */
const TEMPORARY_FOR_MS = 86_400_000;
const RENEW_EVERY_MS = 43_200_000;
const expiryFromNow = () => new Date(Date.now() + TEMPORARY_FOR_MS).toISOString();

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
    const fields = { url, events, description: description.slice(0, 500), expiresAt: expiryFromNow() };
    return (await ask(deps, nats, ctx, 'create', fields)).webhook;
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
  const counts: Counts = { forwarded: 0, failed: 0, refused: 0 };
  const print = (s: Seen) => out.write(`${json ? JSON.stringify(s) : lineOf(s)}\n`);

  const handle = deliveryHandler(verifier, target, print, counts);
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end();
      cliIo().stderr.write(`deskctl: warning: a delivery could not be handled: ${(err as Error).message}\n`);
    });
  });
  const signal = stopSignal();
  let renewal: NodeJS.Timeout | undefined;
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
    const id = subscription.id;
    renewal = setInterval(() => {
      ask(deps, nats, ctx, 'update', { id, expiresAt: expiryFromNow() }).catch((err: unknown) =>
        cliIo().stderr.write(
          `deskctl: warning: ${id}'s expiry could not be pushed back: ${(err as Error).message}\n`,
        ),
      );
    }, RENEW_EVERY_MS);
    const by = await signal.stopped;
    return { by, subscriptionId: subscription.id, counts };
  } finally {
    clearInterval(renewal);
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
