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
  /** Connections kept open to one receiver address at most (the lanes that may post to it at once). */
  connectionsPerReceiver: number;
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

/** The most receivers (origin and pinned address) whose connections are kept open at once. */
const KEPT_RECEIVERS = 256;
/** The most secrets whose signers are kept (their keys decoded). */
const KEPT_KEYS = 1024;

/**
 * A Map that forgets its oldest entry past `limit` (an entry read is made the newest): the sender's
 * decoded keys and pooled receivers stay bounded whatever the subscriptions.
 */
function recentlyUsed<V>(limit: number, evicted: (value: V) => void = () => {}) {
  const entries = new Map<string, V>();
  return (key: string, make: () => V): V => {
    let value = entries.get(key);
    if (value !== undefined) entries.delete(key);
    else value = make();
    entries.set(key, value);
    if (entries.size > limit) {
      const [oldestKey, oldest] = entries.entries().next().value as [string, V];
      entries.delete(oldestKey);
      evicted(oldest);
    }
    return value;
  };
}

/**
 * The Standard Webhooks signature header: one `v1,<base64>` per secret, space-separated, signed
 * by the specification's own library; each secret's signer (its key decoded) made once and kept,
 * where every attempt made one per secret before.
 */
function signer() {
  const signerOf = recentlyUsed<Webhook>(KEPT_KEYS);
  return (secrets: string[], id: string, at: Date, payload: string): string =>
    secrets.map((secret) => signerOf(secret, () => new Webhook(secret)).sign(id, at, payload)).join(' ');
}

/**
 * Reads at most `cap` bytes of a body, then stops reading (the rest is never buffered, and the
 * connection is dropped); a body read to its end leaves the connection to the next attempt.
 */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, cap: number): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read >= cap) {
      body.destroy();
      return;
    }
  }
}

/**
 * Posts deliveries: SSRF rules (resolve once per attempt, refuse private ranges, connect to the
 * pinned address), no redirects (a 3xx is an answer like any other non-2xx), connect and response
 * timeouts, the answer's body read up to a cap and dropped.
 *
 * Connections are kept open per receiver and pinned address (an undici pool of at most
 * `connectionsPerReceiver`, closed when idle for undici's keep-alive time or when the receiver
 * names a shorter one): a pooled connection only ever goes to the address the attempt's own
 * resolution allowed (a host now resolving elsewhere gets a pool of its own), and a fresh TCP
 * connection per attempt cost more than the attempt's signing and its body together.
 */
export function createSender(opts: SenderOptions) {
  const allowed = allowedRanges(opts.allowedRanges);
  const signatureHeader = signer();
  const pools = new Set<Agent>();
  const poolOf = recentlyUsed<Agent>(KEPT_RECEIVERS, (agent) => {
    pools.delete(agent);
    // Let what is in flight on it finish; its connections then close.
    agent.close().catch(() => undefined);
  });
  const newPool = (address: PinnedAddress) => {
    const pinnedLookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [address]);
      } else callback(null, address.address, address.family);
    };
    const agent = new Agent({
      connect: { timeout: opts.connectTimeoutMs, lookup: pinnedLookup },
      headersTimeout: opts.responseTimeoutMs,
      bodyTimeout: opts.responseTimeoutMs,
      connections: opts.connectionsPerReceiver,
    });
    pools.add(agent);
    return agent;
  };

  async function send(d: OutgoingDelivery): Promise<AttemptOutcome> {
    const started = Date.now();
    const done = (status: number | null, error: string | null): AttemptOutcome => ({
      status,
      error,
      durationMs: Date.now() - started,
    });
    let pinned: PinnedAddress | undefined;
    let host = '';
    try {
      const url = new URL(d.url);
      host = url.hostname;
      const address = await pinDestination(url, allowed);
      pinned = address;
      const agent = poolOf(`${url.origin} ${address.address}`, () => newPool(address));
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
    }
  }

  return {
    send,
    /** Closes every kept connection (at shutdown, after the worker's last attempt). */
    close: () => Promise.allSettled([...pools].map((agent) => agent.destroy())).then(() => undefined),
  };
}

export type Send = (d: OutgoingDelivery) => Promise<AttemptOutcome>;
