import type { NatsNames, ReceivedEvent } from '@support-desk/contracts';
import {
  type ConsumerStats,
  deadLetterStore,
  type DomainEventReader,
  type ReplayedSignature,
  type NatsConnection,
  runConsumer,
} from '@support-desk/platform/messaging';
import type { Logger } from '@support-desk/platform/core';
import type { Connection } from 'mongoose';
import { listKeys, type StoredEvent, toStoredChanges } from '../store/event-model.js';
import { eventWriter, type InsertEvents, StoreUnavailableError } from '../store/event-writes.js';
import { Batcher } from './batcher.js';

export interface IngestionOptions {
  nc: NatsConnection;
  conn: Connection;
  names: NatsNames;
  logger: Logger;
  /** The events stream's reader (signature, subject and producer checked). */
  read: DomainEventReader;
  durable: string;
  concurrency: number;
  batchSize: number;
  flushMs: number;
  maxConcurrentWrites: number;
  maxDeliver: number;
  ackWaitMs: number;
  backoffMs?: number[];
  /** Interval of the "ingestion stats" log line; 0 = never. */
  statsLogMs?: number;
  /** Replaces the store write (tests inject crashes around the real one). */
  insert?: InsertEvents;
}

interface IngestionStats extends ConsumerStats {
  inserted: number;
  duplicates: number;
  batches: number;
  failedBatches: number;
}

export interface Ingestion {
  stats(): IngestionStats;
  /** Stops pulling, writes and acks what is in hand, then returns (messages left unacked are redelivered). */
  stop(): Promise<void>;
}

/**
 * The audit copy of an event: the envelope as published, `_id` = event id, timestamp as a Date.
 * The trace id is the producer's; an event from a producer that wrote none gets the trace its
 * message was delivered in, when there is one.
 */
export function toStoredEvent(e: ReceivedEvent, deliveredInTrace?: string): StoredEvent {
  const traceId = e.metadata.traceId ?? deliveredInTrace;
  const timestamp = new Date(e.timestamp);
  const doc: StoredEvent = {
    _id: e.id,
    type: e.type,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    actor: e.actor,
    metadata: traceId ? { ...e.metadata, traceId } : e.metadata,
    timestamp,
    storedAt: new Date(0),
  };
  Object.assign(doc, listKeys(doc));
  if (e.changes && Object.keys(e.changes).length > 0) doc.changes = toStoredChanges(e.changes);
  if (e.ipAddress) doc.ipAddress = e.ipAddress;
  if (e.snapshot) doc.snapshot = e.snapshot;
  return doc;
}

/**
 * Every domain event from JetStream into the events collection: decode (poison → dead letter),
 * batch, unordered insert keyed by event id (duplicates are success), ack after the write.
 */
export async function startIngestion(opts: IngestionOptions): Promise<Ingestion> {
  const log = opts.logger.child({ component: 'ingestion' });
  const insert = opts.insert ?? eventWriter(opts.conn);
  const counts = { inserted: 0, duplicates: 0, batches: 0, failedBatches: 0 };
  const batcher = new Batcher<StoredEvent>({
    maxBatch: opts.batchSize,
    flushMs: opts.flushMs,
    maxConcurrentWrites: opts.maxConcurrentWrites,
    write: async (docs) => {
      const outcome = await insert(docs);
      counts.inserted += outcome.inserted;
      counts.duplicates += outcome.duplicates;
      return outcome;
    },
    onBatch: (size, ms, err) => {
      counts.batches++;
      if (err) {
        counts.failedBatches++;
        log.warn({ err, size, ms }, 'event batch not stored; its messages will be redelivered');
      }
    },
  });
  const deadLetters = deadLetterStore(opts.conn);
  const consumer = await runConsumer<ReceivedEvent>({
    nc: opts.nc,
    logger: log,
    stream: opts.names.eventsStream,
    durable: opts.durable,
    filterSubjects: [opts.names.eventsWildcard],
    decode: opts.read,
    handle: (event, { traceId }) => batcher.add(toStoredEvent(event, traceId)),
    deadLetter: deadLetters.write,
    // A database outage is waited out: it must not turn good events into dead letters.
    isTransient: (err) => err instanceof StoreUnavailableError,
    concurrency: opts.concurrency,
    maxDeliver: opts.maxDeliver,
    ackWaitMs: opts.ackWaitMs,
    ...(opts.backoffMs ? { backoffMs: opts.backoffMs } : {}),
  });
  const stats = (): IngestionStats => ({ ...consumer.stats, ...counts });

  let last = '';
  const statsTimer =
    opts.statsLogMs && opts.statsLogMs > 0
      ? setInterval(() => {
          const now = JSON.stringify(stats());
          if (now !== last) log.info({ stats: stats() }, 'ingestion stats');
          last = now;
        }, opts.statsLogMs)
      : undefined;
  statsTimer?.unref();

  const pendingDeadLetters = await deadLetters.model.estimatedDocumentCount().catch(() => undefined);
  log.info({ durable: opts.durable, deadLetters: pendingDeadLetters }, 'ingestion started');

  return {
    stats,
    async stop() {
      clearInterval(statsTimer);
      await consumer.stop();
      await batcher.close();
      log.info({ stats: stats() }, 'ingestion stopped');
    },
  };
}

/**
 * Replays one dead letter into the store: read by the same reader as a delivery (a message this
 * release still cannot read, or that its sender may not send, throws, and stays a dead letter),
 * inserted keyed by event id, so an event that did land meanwhile is not stored twice.
 */
export function replayDeadLetter(conn: Connection, read: DomainEventReader) {
  const insert = eventWriter(conn);
  return async (data: Uint8Array, subject: string, signature: ReplayedSignature): Promise<void> => {
    await insert([toStoredEvent(read(data, subject, signature))]);
  };
}
