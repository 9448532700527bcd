import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Model } from 'mongoose';
import { acquireAggregateLock, aggregateKey, collectionKey, lockStoreOf } from './aggregate-lock.js';
import { inUpdateChunks } from './bulk-updates.js';
import {
  heldDocuments,
  outboxPublished,
  outboxPublishErrors,
  recordOutboxPending,
  recordOutboxPublished,
} from './event-metrics.js';
import type { Logger } from './logger.js';
import type { MessageSigner } from './message-signing.js';
import type { OutboxEntry } from './outbox-entry.js';
import { type NotedReads, notedReadsOf, pendingDocsOf } from './outbox-reads.js';
import { createOutboxSweep, type PendingDoc } from './outbox-sweep.js';
import {
  forgetPublished,
  notedTotals,
  notePendingQuietly,
  pendingListeners,
  takePending,
} from './outbox-pending.js';
import { publishSpan } from './telemetry/propagation.js';

export interface OutboxRelayOptions {
  nc: NatsConnection;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  models: Model<any>[];
  logger: Logger;
  /** The service publishing: every entry goes out signed by it (message-signing.ts). */
  signer: MessageSigner;
  /**
   * Interval of the safety-net sweep for pending entries left by another process (a crash
   * between its write and its publish, a tool that exits; default 5 s). Writes in this process
   * are published at once, by id. The sweep reads in full at start and once an hour; in between
   * it reads by the minute the entries were written in (`outboxMinute`), each minute once, two
   * minutes after it ended: on most passes it reads nothing.
   */
  pollIntervalMs?: number;
  /** Interval of the full sweep (default 1 h). */
  fullSweepIntervalMs?: number;
  /** The clock the sweep's minutes are read by (tests move it; default `Date.now`). */
  clock?: () => number;
  /** Documents scanned per model per pass. */
  batchSize?: number;
  /**
   * Documents published in parallel (per-document order is always kept). Default: 16 on MongoDB,
   * 8 on FerretDB on PostgreSQL; 1 on FerretDB on SQLite, which serialises writes, so parallel
   * removals only contend (a 1,500-document backlog drained at 69 documents/s with 1, 48 with 4,
   * 32 with 16).
   */
  parallelism?: number;
  publishTimeoutMs?: number;
  /**
   * How long `stop` goes on publishing this process's own writes noted since the last pass
   * (default 5 s): a replica shutting down sends its last moments' events itself instead of
   * leaving them to another replica's sweep minutes later.
   */
  stopFlushMs?: number;
}

export interface OutboxRelay {
  start(): void;
  /** Stops passes; resolves once the pass in flight (if any) has ended, so nothing publishes after. */
  pause(): Promise<void>;
  resume(): void;
  /** Stops passes and publishes what this process wrote since the last one, within `stopFlushMs`. */
  stop(): Promise<void>;
  /**
   * Resolves once a pass found nothing pending (tests, shutdown, tools). With `sweep` (default)
   * that pass also sweeps the collections in full; without, it waits for this process's writes.
   */
  idle(opts?: { sweep?: boolean }): Promise<void>;
  stats: { published: number; failures: number };
}

const MAX_BACKOFF_MS = 30_000;
const encoder = new TextEncoder();

type DocWithEntries = { _id: unknown; outbox: OutboxEntry[] };
/** What publishing a document's entries did: those sent, in order, and the failure that stopped it. */
type PublishedDoc = { doc: DocWithEntries; sent: OutboxEntry[]; error?: unknown };
/** Documents published in parallel by default, by how the store reads (see outbox-reads.ts). */
const PARALLELISM: Record<NotedReads, number> = { in: 16, 'by-id': 8, 'by-id-few': 1 };

export function createOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { models, logger, pollIntervalMs = 5000, batchSize = 200, publishTimeoutMs = 5000 } = opts;
  let parallelism = opts.parallelism;
  let notedReads: NotedReads | undefined;
  for (const model of models) {
    const key = collectionKey(model.collection);
    heldDocuments(model.collection.collectionName, { key, totals: () => notedTotals(key) });
  }
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

  /** Publishes a document's entries in order, up to the first that fails. */
  const publishEntries = async (
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
    model: Model<any>,
    doc: DocWithEntries,
  ): Promise<PublishedDoc> => {
    const sent: OutboxEntry[] = [];
    for (const entry of doc.outbox) {
      try {
        const data = encoder.encode(entry.payload);
        await publishSpan(entry.subject, entry.id, entry, (headers) =>
          js.publish(entry.subject, data, {
            msgID: entry.id,
            timeout: publishTimeoutMs,
            headers: opts.signer.sign(entry.subject, data, headers),
          }),
        );
        sent.push(entry);
      } catch (error) {
        outboxPublishErrors.inc({ collection: model.collection.collectionName });
        return { doc, sent, error }; // keep per-aggregate order: nothing after a failed entry goes out
      }
    }
    return { doc, sent };
  };

  /**
   * Removes what a window of documents published, in one bulk write: an exact-entry `$pullAll`
   * per document removes only what was published, never entries appended meanwhile, and the
   * documents' aggregate locks, taken in key order, keep FerretDB from losing a concurrent write
   * (see aggregate-lock.ts). One write per document cost the requests service about 1 ms of CPU
   * each on creates; in a bulk write it is about a quarter of that. Throws the first publish
   * failure of the window once the rest is removed.
   */
  const removePublished = async (
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
    model: Model<any>,
    published: PublishedDoc[],
  ) => {
    const name = model.collection.collectionName;
    const done = published.filter((p) => p.sent.length > 0);
    if (done.length > 0) {
      const keys = [...new Set(done.map((p) => aggregateKey(model.collection, p.doc._id)))].sort();
      const releases: (() => void)[] = [];
      try {
        for (const key of keys) releases.push(await acquireAggregateLock(key, lockStoreOf(model.collection)));
        await inUpdateChunks(
          done.map((p) => ({
            updateOne: { filter: { _id: p.doc._id }, update: { $pullAll: { outbox: p.sent } } },
          })),
          (chunk) => model.collection.bulkWrite(chunk as never, { ordered: false }),
        );
      } finally {
        for (const release of releases) release();
      }
      for (const p of done) {
        forgetPublished(collectionKey(model.collection), p.doc._id, p.sent);
        stats.published += p.sent.length;
        outboxPublished.inc({ collection: name }, p.sent.length);
      }
    }
    let failure: { error: unknown } | undefined;
    for (const p of published) {
      if (!('error' in p)) recordOutboxPublished(name, p.doc._id);
      else {
        recordOutboxPending(name, p.doc._id, p.doc.outbox.slice(p.sent.length));
        failure ??= { error: p.error };
      }
    }
    if (failure) throw failure.error;
  };

  const publishAll = async (
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
    model: Model<any>,
    docs: PendingDoc[],
  ) => {
    const withEntries = docs.filter((d): d is DocWithEntries => {
      const pending = d.outbox ?? [];
      recordOutboxPending(model.collection.collectionName, d._id, pending);
      return pending.length > 0;
    });
    const width = parallelism ?? 1;
    for (let i = 0; i < withEntries.length; i += width) {
      const window = withEntries.slice(i, i + width);
      await removePublished(model, await Promise.all(window.map((d) => publishEntries(model, d))));
    }
  };

  const sweeps = createOutboxSweep({
    models,
    batchSize,
    fullSweepIntervalMs: opts.fullSweepIntervalMs ?? 3_600_000,
    clock: opts.clock ?? Date.now,
    publishAll,
  });

  let nextScanAt = 0;
  const pass = async (): Promise<boolean> => {
    notedReads ??= await notedReadsOf(models[0]);
    // One document at a time on FerretDB's SQLite backend, which serialises writes.
    parallelism ??= PARALLELISM[notedReads];
    let more = false;
    let sweepFull = false;
    const scan = Date.now() >= nextScanAt;
    for (const model of models) {
      const collection = collectionKey(model.collection);
      const noted = takePending(collection, batchSize);
      if (noted.more) more = true;
      if (noted.writes.length > 0) {
        try {
          await publishAll(model, await pendingDocsOf(model, noted.writes, notedReads));
        } catch (err) {
          // Put back to be read: the store knows what is still pending, this process may not.
          for (const write of noted.writes) notePendingQuietly(collection, write.id);
          throw err;
        }
      }
      if (scan && (await sweeps.sweep(model))) sweepFull = more = true;
    }
    // A full sweep batch means more may be pending: sweep again at once, not one interval later.
    if (scan) nextScanAt = sweepFull ? 0 : Date.now() + pollIntervalMs;
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

  const wake = () => queueMicrotask(trigger);

  /** Passes over this process's noted writes only (no sweep), until none is left or the bound. */
  const flushNoted = async () => {
    nextScanAt = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 1000 && (await pass()); i++);
  };

  /** The last pass at stop, bounded in time: what it cannot send stays pending for the sweeps. */
  const lastPass = async () => {
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), opts.stopFlushMs ?? 5000)));
    try {
      const outcome = await Promise.race([flushNoted().then(() => 'done' as const), bound]);
      if (outcome === 'late')
        log.warn('outbox: stopped before every noted write was published; the sweeps will');
    } catch (err) {
      log.warn({ err }, 'outbox: last publish at stop failed; the sweeps will publish what is left');
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    stats,
    start() {
      if (!stopped) return;
      stopped = false;
      nextScanAt = 0;
      sweeps.requestFull();
      pendingListeners.add(wake);
      poller = setInterval(trigger, pollIntervalMs);
      poller.unref();
      trigger();
    },
    pause() {
      paused = true;
      return current.catch(() => undefined);
    },
    resume() {
      paused = false;
      trigger();
    },
    idle({ sweep = true } = {}) {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        if (sweep) {
          nextScanAt = 0;
          sweeps.requestFull();
        }
        dirty = true;
        trigger();
      });
    },
    async stop() {
      const wasStarted = !stopped;
      stopped = true;
      pendingListeners.delete(wake);
      clearInterval(poller);
      clearTimeout(wakeTimer);
      wakeTimer = undefined;
      await current.catch(() => undefined);
      if (wasStarted) await lastPass();
      for (const w of idleWaiters) w();
      idleWaiters = [];
    },
  };
}
