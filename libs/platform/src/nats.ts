import { natsNames } from '@support-desk/contracts';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from './logger.js';

export type { NatsConnection };

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const encodeJson = (value: unknown) => encoder.encode(JSON.stringify(value));
export const decodeJson = <T = unknown>(data: Uint8Array): T => JSON.parse(decoder.decode(data)) as T;

export interface NatsOptions {
  url: string;
  name: string;
  logger?: Logger;
}

/**
 * Servers and credentials from a NATS URL: `nats://user:password@host:4222` (a user of the
 * server's authorization block) or `nats://token@host:4222`; a cluster's servers as a
 * comma-separated list (`nats://a:4222,nats://b:4222`, credentials from the first), so a client
 * whose first server is down at start connects to another (it learns the rest from the cluster).
 * The client takes credentials only as options, never from the URL, so they are split off here
 * (and never logged).
 */
export function natsConnectOptions(url: string): {
  servers: string | string[];
  user?: string;
  pass?: string;
  token?: string;
} {
  const urls = url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => new URL(u));
  const user = decodeURIComponent(urls[0].username);
  const pass = decodeURIComponent(urls[0].password);
  const list = urls.map((parsed) => {
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  });
  const servers = list.length === 1 ? list[0] : list;
  if (user && pass) return { servers, user, pass };
  if (user) return { servers, token: user };
  return { servers };
}

/**
 * Connects and keeps reconnecting forever; status changes are logged. Replies and JetStream
 * deliveries come to the inbox prefix `_INBOX_<name>`, which the server's permissions let only
 * this service read (deploy/nats.conf).
 */
export async function connectNats({ url, name, logger }: NatsOptions): Promise<NatsConnection> {
  const nc = await connect({
    ...natsConnectOptions(url),
    name,
    inboxPrefix: `_INBOX_${name}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    waitOnFirstConnect: false,
  });
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        logger?.warn({ nats: s.type }, `nats ${s.type}`);
      }
    }
  })().catch(() => undefined);
  return nc;
}

export async function pingNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error('nats closed');
  await nc.flush();
}

/**
 * JetStream's management API on `nc`, without the account-info request the client makes by
 * default to check that JetStream is on: no service's NATS user may read the account's
 * JetStream information (`$JS.API.INFO`, deploy/nats.conf), only its own streams and consumers.
 */
export const jetstreamApi = (nc: NatsConnection): Promise<JetStreamManager> =>
  jetstreamManager(nc, { checkAPI: false });

export function isNotFound(err: unknown): boolean {
  const e = err as { code?: number | string; message?: string; api_error?: { code?: number } };
  return (
    e?.api_error?.code === 404 ||
    e?.code === 404 ||
    e?.code === '404' ||
    /not found/i.test(String(e?.message ?? ''))
  );
}

export { natsNames };
