import { type JetStreamClient, jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { type DomainEvent, type NatsNames, newId } from '@support-desk/contracts';
import { type Model, Schema } from 'mongoose';
import { acquireAggregateLock, aggregateKey, withAggregateLock } from './aggregate-lock.js';
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

/**
 * Written aggregates with possibly pending entries, per collection, so relays in this process
 * publish them by id right away instead of waiting for a scan (a scan is a full collection read on
 * FerretDB). Writes from other processes are found by the relay's periodic scan.
 */
const pendingByCollection = new Map<string, Map<string, unknown>>();
const pendingListeners = new Set<() => void>();

function notePendingQuietly(collection: string, id: unknown) {
  let ids = pendingByCollection.get(collection);
  if (!ids) {
    ids = new Map();
    pendingByCollection.set(collection, ids);
  }
  ids.set(String(id), id);
}

function notePending(collection: string, id: unknown) {
  if (id === undefined || id === null) return;
  notePendingQuietly(collection, id);
  for (const listener of pendingListeners) listener();
}

/** Up to `max` noted ids of a collection (the rest stay noted); `more` when some are left. */
function takePending(collection: string, max: number): { ids: unknown[]; more: boolean } {
  const noted = pendingByCollection.get(collection);
  if (!noted || noted.size === 0) return { ids: [], more: false };
  const ids: unknown[] = [];
  for (const [key, id] of noted) {
    if (ids.length === max) break;
    ids.push(id);
    noted.delete(key);
  }
  return { ids, more: noted.size > 0 };
}

const LOCKED_QUERIES: ('updateOne' | 'findOneAndUpdate' | 'replaceOne' | 'findOneAndReplace')[] = [
  'updateOne',
  'findOneAndUpdate',
  'replaceOne',
  'findOneAndReplace',
];
const RELEASE = Symbol('aggregateLockRelease');

type LockedQuery = {
  getFilter(): Record<string, unknown>;
  model: { collection: { collectionName: string } };
  [RELEASE]?: () => void;
};

/** The single `_id` a query targets, if it targets exactly one aggregate by id. */
function targetId(filter: Record<string, unknown>): unknown {
  const id = filter._id;
  if (id === undefined || id === null) return undefined;
  if (typeof id === 'object' && !('toHexString' in (id as object))) return undefined; // an operator
  return id;
}

/**
 * Adds the `outbox` array (and the index the relay scans) to an aggregate's schema, and queues
 * every by-id write of the aggregate behind the same per-aggregate lock as the relay's clean-up.
 */
export function outboxPlugin(schema: Schema): void {
  schema.add({ outbox: { type: [OutboxEntrySchema], default: [], select: false } });
  schema.index({ 'outbox.id': 1 }, { sparse: true });

  schema.pre(LOCKED_QUERIES, { document: false, query: true }, async function (this: LockedQuery) {
    const id = targetId(this.getFilter());
    if (id === undefined) return;
    this[RELEASE] = await acquireAggregateLock(aggregateKey(this.model.collection.collectionName, id));
  });
  const afterQuery = function (this: LockedQuery) {
    this[RELEASE]?.();
    const id = targetId(this.getFilter());
    if (id !== undefined) notePending(this.model.collection.collectionName, id);
  };
  schema.post(LOCKED_QUERIES, { document: false, query: true }, afterQuery);
  schema.post(
    LOCKED_QUERIES,
    { document: false, query: true },
    function (this: LockedQuery, err: Error, _res: unknown, next: (err?: Error) => void) {
      this[RELEASE]?.();
      next(err);
    },
  );

  type SavedDoc = {
    isNew: boolean;
    _id: unknown;
    collection: { collectionName: string };
    $locals: Record<string, unknown>;
  };
  schema.pre('save', async function (this: SavedDoc) {
    // Inserts are atomic on both stores; only updates of an existing document need the queue.
    if (this.isNew) return;
    this.$locals.releaseAggregateLock = await acquireAggregateLock(
      aggregateKey(this.collection.collectionName, this._id),
    );
  });
  schema.post('save', function (this: SavedDoc) {
    (this.$locals.releaseAggregateLock as (() => void) | undefined)?.();
    notePending(this.collection.collectionName, this._id);
  });
  schema.post('save', function (this: SavedDoc, err: Error, _res: unknown, next: (err?: Error) => void) {
    (this.$locals.releaseAggregateLock as (() => void) | undefined)?.();
    next(err);
  });
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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
  models: Model<any>[];
  logger: Logger;
  /**
   * Interval of the safety-net scan for pending entries written by other processes or left by a
   * crash (default 5 s). Writes in this process are published at once, by id.
   */
  pollIntervalMs?: number;
  /** Documents scanned per model per pass. */
  batchSize?: number;
  /**
   * Documents published in parallel (per-document order is always kept). Default: 16 on MongoDB;
   * 1 on FerretDB v1, whose SQLite backend serialises writes, so parallel removals only contend
   * (a 1,500-document backlog drained at 69 documents/s with 1, 48 with 4, 32 with 16).
   */
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

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
async function defaultParallelism(model: Model<any> | undefined): Promise<number> {
  const info = await model?.db.db
    ?.admin()
    .command({ buildInfo: 1 })
    .catch(() => null);
  return info && 'ferretdbVersion' in info ? 1 : 16;
}

export function createOutboxRelay(opts: OutboxRelayOptions): OutboxRelay {
  const { models, logger, pollIntervalMs = 5000, batchSize = 200, publishTimeoutMs = 5000 } = opts;
  let parallelism = opts.parallelism;
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
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
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
      // Exact-entry $pullAll removes only what was published, never entries appended meanwhile;
      // the aggregate lock keeps FerretDB from losing a concurrent write (see aggregate-lock.ts).
      await withAggregateLock(aggregateKey(model.collection.collectionName, doc._id), () =>
        model.collection.updateOne({ _id: doc._id } as never, { $pullAll: { outbox: sent } } as never),
      );
      stats.published += sent.length;
    }
    if (error) throw error;
  };

  type PendingDoc = { _id: unknown; outbox?: OutboxEntry[] };
  const publishAll = async (
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- relays any aggregate model
    model: Model<any>,
    docs: PendingDoc[],
  ) => {
    const withEntries = docs.filter(
      (d): d is { _id: unknown; outbox: OutboxEntry[] } => (d.outbox?.length ?? 0) > 0,
    );
    const width = parallelism ?? 1;
    for (let i = 0; i < withEntries.length; i += width) {
      await Promise.all(withEntries.slice(i, i + width).map((d) => publishDocument(model, d)));
    }
  };

  let nextScanAt = 0;
  const pass = async (): Promise<boolean> => {
    parallelism ??= await defaultParallelism(models[0]);
    let more = false;
    let scanFull = false;
    const scan = Date.now() >= nextScanAt;
    for (const model of models) {
      const collection = model.collection.collectionName;
      const noted = takePending(collection, batchSize);
      if (noted.more) more = true;
      if (noted.ids.length > 0) {
        try {
          // By id, one query per batch: the normal path right after a write. (One `$in` query, not
          // a findOne per id: FerretDB v1 reads a whole collection for either.)
          const fresh = await model.collection
            .find({ _id: { $in: noted.ids } } as never, { projection: { outbox: 1 } })
            .toArray();
          await publishAll(model, fresh as unknown as PendingDoc[]);
        } catch (err) {
          for (const id of noted.ids) notePendingQuietly(collection, id);
          throw err;
        }
      }
      if (!scan) continue;
      const docs = (await model.collection
        .find({ 'outbox.id': { $exists: true } }, { projection: { outbox: 1 }, limit: batchSize })
        .toArray()) as unknown as PendingDoc[];
      if (docs.length === batchSize) scanFull = more = true;
      await publishAll(model, docs);
    }
    // A full scan batch means more may be pending: scan again at once, not one interval later.
    if (scan) nextScanAt = scanFull ? 0 : Date.now() + pollIntervalMs;
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

  return {
    stats,
    start() {
      if (!stopped) return;
      stopped = false;
      nextScanAt = 0;
      pendingListeners.add(wake);
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
        nextScanAt = 0;
        dirty = true;
        trigger();
      });
    },
    async stop() {
      stopped = true;
      pendingListeners.delete(wake);
      clearInterval(poller);
      clearTimeout(wakeTimer);
      wakeTimer = undefined;
      await current.catch(() => undefined);
      for (const w of idleWaiters) w();
      idleWaiters = [];
    },
  };
}
