import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg, jetstream } from '@nats-io/jetstream';
import { type NatsConnection, nanos } from '@nats-io/transport-node';
import {
  consumerDelivered,
  consumerHandlerDuration,
  consumerOutcomes,
  watchConsumerLag,
} from './event-metrics.js';
import type { Logger } from './logger.js';
import { observeInTrace } from './metrics.js';
import { type DeadLetter, messageText } from './deadletters.js';
import { type MessageSignature, signatureOf } from './message-signing.js';
import { isNotFound, jetstreamApi } from './nats.js';
import { consumeSpan } from './telemetry/propagation.js';

/** Thrown by `decode` (or a handler) for a message that can never succeed: it is dead-lettered at once. */
export class PoisonMessageError extends Error {}

export interface ConsumerOptions<T> {
  nc: NatsConnection;
  logger: Logger;
  stream: string;
  /** Durable consumer name: replicas sharing it share the work. */
  durable: string;
  filterSubjects: string[];
  /**
   * Parses and validates (its sender's signature too, when it has one); throw PoisonMessageError
   * for a message that is unparseable, invalid, or not from a service that may send it.
   */
  decode: (data: Uint8Array, subject: string, signature: MessageSignature | null) => T;
  /** The side effect. Resolve = ack. Throw = nak with backoff (transient), or dead letter if poison. */
  handle: (
    message: T,
    meta: {
      subject: string;
      deliveryCount: number;
      streamSequence: number;
      /** The trace this handling runs in: the publisher's (its `traceparent` header), when traced. */
      traceId?: string;
    },
  ) => Promise<void>;
  /** Stores the dead-letter record; if it throws, the message is nak'ed and retried later. */
  deadLetter: (record: DeadLetter) => Promise<void>;
  /** Messages handled at once (default 16). */
  concurrency?: number;
  /** Deliveries before a failing message is dead-lettered (default 10). */
  maxDeliver?: number;
  /**
   * Failures for which this returns true (e.g. the database is unreachable) are retried with
   * backoff for as long as they last and never exhaust `maxDeliver`: an outage must not turn
   * good messages into dead letters.
   */
  isTransient?: (err: unknown) => boolean;
  /** Redelivery delays for attempts 1, 2, ...; the last repeats (default 0.5s, 1s, 2s, 5s, 10s). */
  backoffMs?: number[];
  ackWaitMs?: number;
}

export interface ConsumerStats {
  acked: number;
  nacked: number;
  deadLettered: number;
}

export interface RunningConsumer {
  stats: ConsumerStats;
  stop(): Promise<void>;
}

const DEFAULT_BACKOFF = [500, 1000, 2000, 5000, 10_000];

/** How long a starting consumer keeps asking a JetStream that does not answer yet. */
const SETUP_DEADLINE_MS = 60_000;

/**
 * Runs `setUp` again while JetStream cannot answer it yet (a request timeout, no responders, the
 * system or a stream's leader temporarily unavailable: an election on a cluster, a server
 * starting), with a growing pause, for at most SETUP_DEADLINE_MS; any other error at once. On a
 * three-server cluster under load a consumer's first `info` timed out and the service exited.
 */
async function untilJetStreamAnswers<T>(
  logger: Logger,
  durable: string,
  setUp: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + SETUP_DEADLINE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await setUp();
    } catch (err) {
      const text = `${(err as Error)?.name} ${(err as Error)?.message}`;
      const transient = /timeout|no responders|temporarily unavailable|leader|not available/i.test(text);
      if (!transient || Date.now() > deadline) throw err;
      logger.warn(
        { err, consumer: durable, attempt },
        'JetStream not answering yet; setting the consumer up again',
      );
      await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 5000)));
    }
  }
}

/** Creates the durable consumer if needed (idempotent) so it exists before the first publish. */
export async function ensureConsumer(
  nc: NatsConnection,
  stream: string,
  durable: string,
  filterSubjects: string[],
  ackWaitMs = 30_000,
): Promise<void> {
  const jsm = await jetstreamApi(nc);
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    // Redelivery is bounded by the runner (dead letter), not silently by the server.
    max_deliver: -1,
    ...(filterSubjects.length === 1
      ? { filter_subject: filterSubjects[0] }
      : { filter_subjects: filterSubjects }),
  };
  try {
    await jsm.consumers.info(stream, durable);
    await jsm.consumers.update(stream, durable, {
      ack_wait: config.ack_wait,
      ...(filterSubjects.length === 1
        ? { filter_subject: filterSubjects[0] }
        : { filter_subjects: filterSubjects }),
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.consumers.add(stream, config);
  }
}

/**
 * The stream sequence through which a durable consumer has settled every message (acked, or
 * dead-lettered and terminated): its ack floor, shared by all replicas reading through it. Read
 * at most once per `maxAgeMs`; a floor read earlier is never higher than the true one.
 */
export function consumerAckFloor(
  nc: NatsConnection,
  stream: string,
  durable: string,
  maxAgeMs = 100,
): () => Promise<number> {
  let read = { at: -Infinity, floor: 0 };
  let reading: Promise<number> | undefined;
  return () => {
    if (Date.now() - read.at < maxAgeMs) return Promise.resolve(read.floor);
    reading ??= (async () => {
      const at = Date.now();
      const info = await (await jetstreamApi(nc)).consumers.info(stream, durable);
      read = { at, floor: info.ack_floor.stream_seq };
      return read.floor;
    })().finally(() => {
      reading = undefined;
    });
    return reading;
  };
}

/**
 * Runs a durable pull consumer: explicit ack after the side effect, bounded concurrency,
 * nak with backoff on failure, and dead letter + term for poison or exhausted messages.
 */
export async function runConsumer<T>(opts: ConsumerOptions<T>): Promise<RunningConsumer> {
  const {
    nc,
    logger,
    stream,
    durable,
    filterSubjects,
    concurrency = 16,
    maxDeliver = 10,
    backoffMs = DEFAULT_BACKOFF,
    ackWaitMs = 30_000,
  } = opts;
  const js = jetstream(nc);
  const consumer = await untilJetStreamAnswers(logger, durable, async () => {
    await ensureConsumer(nc, stream, durable, filterSubjects, ackWaitMs);
    return js.consumers.get(stream, durable);
  });
  const stats: ConsumerStats = { acked: 0, nacked: 0, deadLettered: 0 };
  const log = logger.child({ consumer: durable });
  const unwatch = watchConsumerLag(nc, stream, durable);
  const outcome = (o: 'acked' | 'nacked' | 'dead_lettered') =>
    consumerOutcomes.inc({ consumer: durable, outcome: o });
  let messages: ConsumerMessages | undefined;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();

  // ack/nak/term publish on the connection; once it is closed they throw, and the message will
  // simply be redelivered after ack_wait. Never let that escape as an unhandled rejection.
  const settle = (msg: JsMsg, what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      log.warn({ err, seq: msg.seq }, `${what} failed; the message will be redelivered`);
    }
  };

  const deadLetter = async (msg: JsMsg, reason: string) => {
    try {
      await opts.deadLetter({
        stream,
        consumer: durable,
        subject: msg.subject,
        streamSequence: msg.seq,
        deliveryCount: msg.info.deliveryCount,
        reason,
        ...messageText(msg.data),
        signature: signatureOf(msg.headers) ?? null,
        failedAt: new Date(),
      });
      settle(msg, 'term', () => msg.term());
      stats.deadLettered++;
      outcome('dead_lettered');
      log.warn({ subject: msg.subject, seq: msg.seq, reason }, 'message dead-lettered');
    } catch (err) {
      log.error({ err, seq: msg.seq }, 'dead-letter write failed; will retry');
      settle(msg, 'nak', () => msg.nak(backoffMs[backoffMs.length - 1]));
      stats.nacked++;
      outcome('nacked');
    }
  };

  const process = async (msg: JsMsg) => {
    let decoded: T;
    try {
      decoded = opts.decode(msg.data, msg.subject, signatureOf(msg.headers) ?? null);
    } catch (err) {
      await deadLetter(msg, `undecodable: ${(err as Error).message}`);
      return;
    }
    const started = performance.now();
    // The trace the message carried (continued by the consume span): the handler time's exemplar.
    let traceId: string | undefined;
    const timer = (outcome: 'ok' | 'error') =>
      observeInTrace(
        consumerHandlerDuration,
        { consumer: durable, outcome },
        (performance.now() - started) / 1000,
        traceId,
      );
    try {
      await consumeSpan(msg.subject, durable, msg.headers, (id) => {
        traceId = id;
        return opts.handle(decoded, {
          subject: msg.subject,
          deliveryCount: msg.info.deliveryCount,
          streamSequence: msg.seq,
          traceId: id,
        });
      });
      timer('ok');
      settle(msg, 'ack', () => msg.ack());
      stats.acked++;
      outcome('acked');
    } catch (err) {
      timer('error');
      const count = msg.info.deliveryCount;
      const exhausted = count >= maxDeliver && !(opts.isTransient?.(err) ?? false);
      if (err instanceof PoisonMessageError || exhausted) {
        await deadLetter(
          msg,
          `${err instanceof PoisonMessageError ? 'poison' : 'gave up'}: ${(err as Error).message}`,
        );
        return;
      }
      const delay = backoffMs[Math.min(count - 1, backoffMs.length - 1)];
      log.warn(
        { err, subject: msg.subject, seq: msg.seq, deliveryCount: count, retryInMs: delay },
        'handler failed; nak',
      );
      settle(msg, 'nak', () => msg.nak(delay));
      stats.nacked++;
      outcome('nacked');
    }
  };

  const loop = async () => {
    // A closed connection never comes back: end instead of retrying forever.
    while (!stopped && !nc.isClosed()) {
      try {
        messages = await consumer.consume({ max_messages: Math.max(concurrency * 2, 32) });
        // stop() may have run while consume() was resolving; it closed the previous iterator.
        if (stopped) await messages.close();
        for await (const msg of messages) {
          consumerDelivered.inc({ consumer: durable, redelivered: String(msg.redelivered) });
          while (inFlight.size >= concurrency) await Promise.race(inFlight);
          const p = process(msg).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      } catch (err) {
        if (stopped || nc.isClosed()) break;
        log.error({ err }, 'consume loop failed; restarting');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  };
  const running = loop();

  return {
    stats,
    async stop() {
      stopped = true;
      unwatch();
      await messages?.close().catch(() => undefined);
      await Promise.allSettled([...inFlight]);
      await running;
    },
  };
}
