import type { NatsNames } from '@support-desk/contracts';
import { DiscardPolicy, RetentionPolicy, type StreamConfig, StorageType } from '@nats-io/jetstream';
import { type NatsConnection, nanos } from '@nats-io/transport-node';
import type { Logger } from './logger.js';
import { isNotFound, jetstreamApi } from './nats.js';

/**
 * Domain events are kept (file storage) and de-duplicated by `Nats-Msg-Id` = event id within
 * `duplicate_window`: a relay that republishes after a crash inside that window is a no-op.
 */
export const DEFAULT_DUPLICATE_WINDOW_MS = 10 * 60 * 1000;
const NOTICE_MAX_AGE_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** What an operator decides about the streams (`provision-streams`' variables). */
export interface StreamLimits {
  duplicateWindowMs?: number;
  /** Servers each stream is stored on (a cluster of three: 3). */
  replicas?: number;
  /** Events older than this are removed from the stream; 0: kept until `eventsMaxBytes`. */
  eventsMaxAgeDays?: number;
  /** The stream's size at which the oldest events are removed; 0: no bound. */
  eventsMaxBytes?: number;
}

type Stream = 'events' | 'notices';

/** The configuration of each stream, as provisioning makes it. */
export function streamConfigs(
  names: NatsNames,
  limits: StreamLimits = {},
): Record<Stream, Partial<StreamConfig>> {
  const { duplicateWindowMs = DEFAULT_DUPLICATE_WINDOW_MS, replicas = 1 } = limits;
  const common = {
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    num_replicas: replicas,
  };
  return {
    events: {
      ...common,
      name: names.eventsStream,
      subjects: [names.eventsWildcard],
      duplicate_window: nanos(duplicateWindowMs),
      max_age: nanos((limits.eventsMaxAgeDays ?? 0) * DAY_MS),
      max_bytes: limits.eventsMaxBytes || -1,
    },
    notices: {
      ...common,
      name: names.noticesStream,
      subjects: [names.noticesWildcard],
      max_age: nanos(NOTICE_MAX_AGE_MS),
      duplicate_window: nanos(Math.min(duplicateWindowMs, NOTICE_MAX_AGE_MS)),
    },
  };
}

const CHECKED = ['subjects', 'duplicate_window', 'max_age', 'max_bytes', 'num_replicas'] as const;

/**
 * Creates the events and notices streams, or updates the settings above on existing ones. The
 * operator's step (`provision-streams`: a one-shot in compose and `npm start`, a Job in the
 * chart), run as the one NATS user allowed to create and change streams; no service may.
 * Idempotent: returns what it did to each stream.
 */
export async function provisionStreams(
  nc: NatsConnection,
  names: NatsNames,
  limits: StreamLimits = {},
): Promise<Record<Stream, 'created' | 'updated' | 'unchanged'>> {
  const jsm = await jetstreamApi(nc);
  const done = {} as Record<Stream, 'created' | 'updated' | 'unchanged'>;
  for (const [stream, config] of Object.entries(streamConfigs(names, limits)) as [Stream, StreamConfig][]) {
    try {
      const info = await jsm.streams.info(config.name);
      const same = CHECKED.every(
        (k) => config[k] === undefined || JSON.stringify(info.config[k]) === JSON.stringify(config[k]),
      );
      if (!same) await jsm.streams.update(config.name, { ...info.config, ...config });
      done[stream] = same ? 'unchanged' : 'updated';
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await jsm.streams.add(config);
        done[stream] = 'created';
      } catch (addErr) {
        // Another provisioning run created it between our info and add.
        if (!String((addErr as Error).message).includes('already in use')) throw addErr;
        done[stream] = 'unchanged';
      }
    }
  }
  return done;
}

/**
 * Waits until the streams a service uses exist, saying so while one is missing (the operator has
 * not provisioned them yet), and retrying every `retryMs` for as long as it takes (like the
 * connection itself); NATS errors other than "not found" are thrown.
 */
export async function awaitStreams(
  nc: NatsConnection,
  names: NatsNames,
  streams: readonly Stream[],
  logger: Logger,
  { retryMs = 2000 }: { retryMs?: number } = {},
): Promise<void> {
  const jsm = await jetstreamApi(nc);
  const nameOf = { events: names.eventsStream, notices: names.noticesStream };
  for (const stream of streams) {
    for (let attempt = 1; ; attempt++) {
      try {
        await jsm.streams.info(nameOf[stream]);
        break;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        logger.warn(
          { stream: nameOf[stream], attempt },
          `JetStream stream ${nameOf[stream]} does not exist (provision the streams: provision-streams); retrying`,
        );
        await new Promise((r) => setTimeout(r, retryMs));
      }
    }
  }
}
