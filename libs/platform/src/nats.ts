import { type NatsNames, natsNames } from '@support-desk/contracts';
import { type JetStreamManager, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { connect, type NatsConnection, nanos } from '@nats-io/transport-node';
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
 * Server and credentials from a NATS URL: `nats://user:password@host:4222` (a user of the
 * server's authorization block) or `nats://token@host:4222`. The client takes credentials only
 * as options, never from the URL, so they are split off here (and never logged).
 */
export function natsConnectOptions(url: string): {
  servers: string;
  user?: string;
  pass?: string;
  token?: string;
} {
  const parsed = new URL(url);
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  const servers = parsed.toString().replace(/\/$/, '');
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
 * Domain events are kept (file storage) and de-duplicated by `Nats-Msg-Id` = event id within
 * `duplicate_window`: a relay that republishes after a crash inside that window is a no-op.
 */
export const DEFAULT_DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
const NOTICE_MAX_AGE_MS = 60 * 60 * 1000;

export interface StreamOptions {
  duplicateWindowMs?: number;
}

/** Creates or updates the events and notices streams; safe to run from every replica at start. */
export async function ensureStreams(
  nc: NatsConnection,
  names: NatsNames,
  { duplicateWindowMs = DEFAULT_DUPLICATE_WINDOW_MS }: StreamOptions = {},
): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const wanted = [
    {
      name: names.eventsStream,
      subjects: [names.eventsWildcard],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      duplicate_window: nanos(duplicateWindowMs),
    },
    {
      name: names.noticesStream,
      subjects: [names.noticesWildcard],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      max_age: nanos(NOTICE_MAX_AGE_MS),
      duplicate_window: nanos(Math.min(duplicateWindowMs, NOTICE_MAX_AGE_MS)),
    },
  ];
  for (const config of wanted) {
    try {
      const info = await jsm.streams.info(config.name);
      const same =
        info.config.subjects?.join() === config.subjects.join() &&
        info.config.duplicate_window === config.duplicate_window;
      if (!same) await jsm.streams.update(config.name, { ...info.config, ...config });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.streams.add(config);
      } catch (addErr) {
        // Another replica created it between our info and add.
        if (!String((addErr as Error).message).includes('already in use')) throw addErr;
      }
    }
  }
  return jsm;
}

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
