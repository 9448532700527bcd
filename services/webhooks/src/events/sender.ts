import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { allowedRanges, type PinnedAddress, pinDestination } from './destination.js';

export interface SenderOptions {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  bodyCapBytes: number;
  /** WEBHOOKS_ALLOWED_RANGES. */
  allowedRanges: string;
}

export interface OutgoingDelivery {
  url: string;
  /** `webhook-id`. */
  id: string;
  payload: string;
  /** Every secret that signs now (several during a rotation's overlap). */
  secrets: string[];
  at: Date;
}

/** What one attempt gave: an HTTP status, or an error (network, timeout, refusal). */
export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

const USER_AGENT = 'SupportDesk-Webhooks/1.0';

/**
 * The Standard Webhooks signature header: one `v1,<base64>` per secret, space-separated, signed
 * by the specification's own library (receivers verify with it, or any other implementation).
 */
function signatureHeader(secrets: string[], id: string, at: Date, payload: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, at, payload)).join(' ');
}

/** Reads at most `cap` bytes of a body, then stops reading (the rest is never buffered). */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, cap: number): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read >= cap) break;
  }
  body.destroy();
}

/**
 * Posts deliveries: SSRF rules (resolve once, refuse private ranges, connect to the pinned
 * address), no redirects (a 3xx is an answer like any other non-2xx), connect and response
 * timeouts, the answer's body read up to a cap and dropped.
 */
export function createSender(opts: SenderOptions) {
  const allowed = allowedRanges(opts.allowedRanges);
  return async function send(d: OutgoingDelivery): Promise<AttemptOutcome> {
    const started = Date.now();
    const done = (status: number | null, error: string | null): AttemptOutcome => ({
      status,
      error,
      durationMs: Date.now() - started,
    });
    let agent: Agent | undefined;
    let pinned: PinnedAddress | undefined;
    let host = '';
    try {
      const url = new URL(d.url);
      host = url.hostname;
      pinned = await pinDestination(url, allowed);
      const address = pinned;
      const pinnedLookup: LookupFunction = (_host, options, callback) => {
        if ((options as { all?: boolean }).all) {
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
            address,
          ]);
        } else callback(null, address.address, address.family);
      };
      agent = new Agent({
        connect: { timeout: opts.connectTimeoutMs, lookup: pinnedLookup },
        headersTimeout: opts.responseTimeoutMs,
        bodyTimeout: opts.responseTimeoutMs,
        connections: 1,
      });
      const ts = d.at;
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.timeout(opts.responseTimeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'webhook-id': d.id,
          'webhook-timestamp': String(Math.floor(ts.getTime() / 1000)),
          'webhook-signature': signatureHeader(d.secrets, d.id, ts, d.payload),
        },
        body: d.payload,
      });
      await readCapped(res.body, opts.bodyCapBytes).catch(() => undefined);
      return done(res.statusCode, null);
    } catch (err) {
      const e = err as Error & { code?: string };
      if (
        e.name === 'TimeoutError' ||
        e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
        e.code === 'UND_ERR_BODY_TIMEOUT'
      ) {
        return done(null, `timeout: no complete answer within ${opts.responseTimeoutMs} ms`);
      }
      if (e.code === 'UND_ERR_CONNECT_TIMEOUT')
        return done(null, `connect timeout (${opts.connectTimeoutMs} ms)`);
      // A socket error names the address connected to (`connect ECONNREFUSED 10.0.0.7:443`): the
      // log says the host the subscriber gave instead, never where a name led inside the network.
      const message = pinned ? e.message.split(pinned.address).join(host) : e.message;
      return done(null, (e.code ? `${e.code}: ` : '') + message.slice(0, 300));
    } finally {
      agent?.destroy().catch(() => undefined);
    }
  };
}

export type Send = ReturnType<typeof createSender>;
