import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { counter, gauge, histogram } from './metrics.js';

// --- outbox --------------------------------------------------------------------------------------

export const outboxPublished = counter('outbox_published_total', 'Outbox entries published to JetStream', [
  'collection',
]);

export const outboxPublishErrors = counter(
  'outbox_publish_errors_total',
  'Outbox entries whose publish failed (retried with backoff; nothing is lost)',
  ['collection'],
);

/** What the relay's last safety-net scan found pending, per collection (its batch caps the count). */
const backlog = new Map<string, { entries: number; oldest: number | null }>();

export function recordOutboxScan(collection: string, docs: { outbox?: { createdAt: Date | string }[] }[]) {
  let entries = 0;
  let oldest: number | null = null;
  for (const doc of docs) {
    for (const entry of doc.outbox ?? []) {
      entries++;
      const at = new Date(entry.createdAt).getTime();
      if (oldest === null || at < oldest) oldest = at;
    }
  }
  backlog.set(collection, { entries, oldest });
}

gauge(
  'outbox_backlog_entries',
  "Outbox entries pending at the relay's last scan (up to its batch size of documents)",
  ['collection'],
  (set) => {
    for (const [collection, b] of backlog) set({ collection }, b.entries);
  },
);

// Computed at scrape time from the oldest entry's timestamp, so it keeps growing while the relay
// is stuck (NATS down, backing off) instead of freezing at its last value.
gauge(
  'outbox_oldest_entry_age_seconds',
  "Age of the oldest outbox entry pending at the relay's last scan (0: none)",
  ['collection'],
  (set) => {
    for (const [collection, b] of backlog)
      set({ collection }, b.oldest === null ? 0 : Math.max(0, (Date.now() - b.oldest) / 1000));
  },
);

// --- consumers -----------------------------------------------------------------------------------

type ConsumerLabel = 'consumer';
type OutcomeLabel = ConsumerLabel | 'outcome';

export const consumerDelivered = counter<ConsumerLabel | 'redelivered'>(
  'consumer_messages_delivered_total',
  'Messages delivered to a durable consumer (redelivered="true" for a second or later delivery)',
  ['consumer', 'redelivered'],
);

export const consumerOutcomes = counter<OutcomeLabel>(
  'consumer_messages_total',
  'Messages settled by a durable consumer, by outcome (acked, nacked, dead_lettered)',
  ['consumer', 'outcome'],
);

export const consumerHandlerDuration = histogram<OutcomeLabel>(
  'consumer_handler_duration_seconds',
  "How long a consumer's handler took, by outcome (ok, error)",
  ['consumer', 'outcome'],
);

/** The durable consumers of this process, for the pending count read at scrape time. */
const consumers = new Map<string, { nc: NatsConnection; stream: string; jsm?: Promise<JetStreamManager> }>();

export function watchConsumerLag(nc: NatsConnection, stream: string, durable: string): () => void {
  consumers.set(durable, { nc, stream });
  return () => consumers.delete(durable);
}

gauge(
  'consumer_pending_messages',
  "Messages in the stream not yet delivered to the durable consumer (JetStream's num_pending: its lag)",
  ['consumer'],
  async (set) => {
    await Promise.all(
      [...consumers].map(async ([durable, watched]) => {
        if (watched.nc.isClosed()) return;
        // One manager per consumer, made at the first scrape (making one asks the server); a
        // failed one is made again at the next scrape.
        watched.jsm ??= jetstreamManager(watched.nc).catch((err: unknown) => {
          watched.jsm = undefined;
          throw err;
        });
        const info = await watched.jsm
          .then((jsm) => jsm.consumers.info(watched.stream, durable))
          .catch(() => null);
        if (info) set({ consumer: durable }, info.num_pending);
      }),
    );
  },
);
