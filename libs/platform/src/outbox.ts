import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { type DomainEvent, type NatsNames, newId } from '@support-desk/contracts';
import { type Model, Schema } from 'mongoose';
import type { Logger } from './logger.js';

/**
 * Transactional outbox without transactions: pending messages live in an `outbox` array on the
 * aggregate document itself, so the change and the message that announces it are one
 * single-document write. The relay publishes them with `Nats-Msg-Id` = entry id, then removes
 * them. A crash between publish and removal republishes the same id, which JetStream drops as a
 * duplicate inside the stream's duplicate window.
 */
export interface OutboxEntry {
  id: string;
  subject: string;
  payload: string;
  createdAt: Date;
}

const OutboxEntrySchema = new Schema<OutboxEntry>(
  {
    id: { type: String, required: true },
    subject: { type: String, required: true },
    payload: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { _id: false },
);

/** Adds the `outbox` array (and the index the relay scans) to an aggregate's schema. */
export function outboxPlugin(schema: Schema): void {
  schema.add({ outbox: { type: [OutboxEntrySchema], default: [], select: false } });
  schema.index({ 'outbox.id': 1 }, { sparse: true });
}

export function eventEntry(names: NatsNames, event: DomainEvent): OutboxEntry {
  return {
    id: event.id,
    subject: names.eventSubject(event.type),
    payload: JSON.stringify(event),
    createdAt: new Date(),
  };
}

/** Any other message that must leave with the write (e.g. credential notices). */
export function messageEntry(subject: string, body: unknown): OutboxEntry {
  return { id: newId('event'), subject, payload: JSON.stringify(body), createdAt: new Date() };
}

/** `$push` clause appending entries in order; merge into an update document. */
export const pushOutbox = (entries: OutboxEntry[]) => ({ outbox: { $each: entries } });

export interface OutboxRelayOptions {
  nc: NatsConnection;
  // biome-ignore lint/suspicious/noExplicitAny: relays any aggregate model
  models: Model<any>[];
  logger: Logger;
  /** Safety-net scan interval; writes call kick() so the normal path does not wait for it. */
  pollIntervalMs?: number;
  /** Documents scanned per model per pass. */
  batchSize?: number;
  /** Documents published in parallel (per-document order is always kept). */
  parallelism?: number;
  publishTimeoutMs?: number;
}

export interface OutboxRelay {
  start(): void;
  /** Wakes the relay right after a write. */
  kick(): void;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** Resolves once a pass found nothing pending (tests, shutdown). */
  idle(): Promise<void>;
  stats: { published: number; failures: number };
}

const MAX_BACKOFF_MS = 30_000;

export function createOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const {
    models,
    logger,
    pollIntervalMs = 1000,
    batchSize = 200,
    parallelism = 16,
    publishTimeoutMs = 5000,
  } = opts;
  const js: JetStreamClient = jetstream(opts.nc);
  const log = logger.child({ component: 'outbox-relay' });
  const stats = { published: 0, failures: 0 };
  let running = false;
  let stopped = true;
  let paused = false;
  let dirty = false;
  let backoffUntil = 0;
  let consecutiveFailures = 0;
  let poller: NodeJS.Timeout | undefined;
  let wakeTimer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let idleWaiters: (() => void)[] = [];

  const publishDocument = async (
    // biome-ignore lint/suspicious/noExplicitAny: relays any aggregate model
    model: Model<any>,
    doc: { _id: unknown; outbox: OutboxEntry[] },
  ) => {
    const sent: OutboxEntry[] = [];
    let error: unknown;
    for (const entry of doc.outbox) {
      try {
        await js.publish(entry.subject, entry.payload, { msgID: entry.id, timeout: publishTimeoutMs });
        sent.push(entry);
      } catch (err) {
        error = err;
        break; // keep per-aggregate order: nothing after a failed entry goes out
      }
    }
    if (sent.length > 0) {
      // Exact-entry $pullAll: removes only what was published, never entries appended meanwhile.
      await model.collection.updateOne({ _id: doc._id } as never, { $pullAll: { outbox: sent } } as never);
      stats.published += sent.length;
    }
    if (error) throw error;
  };

  const pass = async (): Promise<boolean> => {
    let more = false;
    for (const model of models) {
      const docs = (await model.collection
        .find({ 'outbox.id': { $exists: true } }, { projection: { outbox: 1 }, limit: batchSize })
        .toArray()) as unknown as { _id: unknown; outbox: OutboxEntry[] }[];
      if (docs.length === batchSize) more = true;
      for (let i = 0; i < docs.length; i += parallelism) {
        await Promise.all(docs.slice(i, i + parallelism).map((d) => publishDocument(model, d)));
      }
    }
    return more;
  };

  const run = async () => {
    running = true;
    try {
      do {
        dirty = false;
        const more = await pass();
        if (more) dirty = true;
        consecutiveFailures = 0;
      } while (dirty && !stopped && !paused);
      if (!dirty) {
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const w of waiters) w();
      }
    } catch (err) {
      stats.failures++;
      consecutiveFailures++;
      const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** Math.min(consecutiveFailures, 10));
      backoffUntil = Date.now() + delay;
      log.warn({ err, retryInMs: delay }, 'outbox publish failed; will retry');
      dirty = true;
      schedule(delay);
    } finally {
      running = false;
    }
  };

  const trigger = () => {
    if (stopped || paused) return;
    if (running) {
      dirty = true;
      return;
    }
    const wait = backoffUntil - Date.now();
    if (wait > 0) {
      schedule(wait);
      return;
    }
    current = run();
  };

  const schedule = (ms: number) => {
    if (wakeTimer) return;
    wakeTimer = setTimeout(() => {
      wakeTimer = undefined;
      trigger();
    }, ms);
    wakeTimer.unref();
  };

  return {
    stats,
    start() {
      if (!stopped) return;
      stopped = false;
      poller = setInterval(trigger, pollIntervalMs);
      poller.unref();
      trigger();
    },
    kick: () => queueMicrotask(trigger),
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      trigger();
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        dirty = true;
        trigger();
      });
    },
    async stop() {
      stopped = true;
      clearInterval(poller);
      clearTimeout(wakeTimer);
      wakeTimer = undefined;
      await current.catch(() => undefined);
      for (const w of idleWaiters) w();
      idleWaiters = [];
    },
  };
}
