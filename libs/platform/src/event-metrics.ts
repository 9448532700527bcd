import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { counter, gauge, tracedHistogram } from './metrics.js';
import { jetstreamApi } from './nats.js';

// --- outbox --------------------------------------------------------------------------------------

export const outboxPublished = counter('outbox_published_total', 'Outbox entries published to JetStream', [
  'collection',
]);

export const outboxPublishErrors = counter(
  'outbox_publish_errors_total',
  'Outbox entries whose publish failed (retried with backoff; nothing is lost)',
  ['collection'],
);

/**
 * What the relays of this process hold pending, per collection: each document read with entries
 * and not yet emptied (a publish failing, NATS down), with its entry count and oldest entry. Kept
 * per document, so a stuck relay's oldest entry keeps its age whichever pass read it last.
 */
const held = new Map<string, Map<string, { entries: number; oldest: number }>>();
/** Documents held per collection at most (the oldest entries are among the first held). */
const HELD_MAX = 100_000;

/**
 * This process's writes not yet read by a relay, per collection (by the writes' collection key: two
 * databases may hold a collection of the same name): `notedTotals` of outbox-pending, read at scrape
 * time, so a burst of writes the relay has not reached yet shows in the backlog and its age.
 */
type NotedSource = () => { entries: number; oldest: number | null };
const noted = new Map<string, Map<string, NotedSource>>();

/**
 * A relay serves `collection`: its gauges are reported from now on (0 while nothing is held), with
 * this process's writes the relay has not read yet counted too (`notedSource`: their collection key
 * and their totals).
 */
export function heldDocuments(
  collection: string,
  notedSource?: { key: string; totals: NotedSource },
): Map<string, { entries: number; oldest: number }> {
  let docs = held.get(collection);
  if (!docs) {
    docs = new Map();
    held.set(collection, docs);
  }
  if (notedSource) {
    let sources = noted.get(collection);
    if (!sources) noted.set(collection, (sources = new Map()));
    sources.set(notedSource.key, notedSource.totals);
  }
  return docs;
}

/** The relay read `id` with these entries pending (none: it is no longer held). */
export function recordOutboxPending(
  collection: string,
  id: unknown,
  entries: { createdAt: Date | string }[],
) {
  const docs = heldDocuments(collection);
  if (entries.length === 0) {
    docs.delete(String(id));
    return;
  }
  if (docs.size >= HELD_MAX && !docs.has(String(id))) return;
  let oldest = Infinity;
  for (const entry of entries) oldest = Math.min(oldest, new Date(entry.createdAt).getTime());
  docs.set(String(id), { entries: entries.length, oldest });
}

/** The relay emptied `id`'s outbox (or found it empty). */
export const recordOutboxPublished = (collection: string, id: unknown) =>
  held.get(collection)?.delete(String(id));

/** Held and noted together: the entries waiting in this process and the oldest of them. */
function heldTotals(collection: string, docs: Map<string, { entries: number; oldest: number }>) {
  let entries = 0;
  let oldest: number | null = null;
  const older = (at: number | null) => {
    if (at !== null && (oldest === null || at < oldest)) oldest = at;
  };
  for (const doc of docs.values()) {
    entries += doc.entries;
    older(doc.oldest);
  }
  for (const totals of noted.get(collection)?.values() ?? []) {
    const waiting = totals();
    entries += waiting.entries;
    older(waiting.oldest);
  }
  return { entries, oldest: oldest as number | null };
}

gauge(
  'outbox_backlog_entries',
  "Outbox entries pending in this process: its writes not yet read by its relay, and what the relay read and has not published (another replica's writes show once a sweep finds them)",
  ['collection'],
  (set) => {
    for (const [collection, docs] of held) set({ collection }, heldTotals(collection, docs).entries);
  },
);

// Computed at scrape time from the oldest entry's timestamp, so it keeps growing while the relay
// is stuck (NATS down, backing off) instead of freezing at its last value.
gauge(
  'outbox_oldest_entry_age_seconds',
  'Age of the oldest outbox entry pending in this process, noted or read (0: none)',
  ['collection'],
  (set) => {
    for (const [collection, docs] of held) {
      const { oldest } = heldTotals(collection, docs);
      set({ collection }, oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
    }
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

export const consumerHandlerDuration = tracedHistogram<OutcomeLabel>(
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
        watched.jsm ??= jetstreamApi(watched.nc).catch((err: unknown) => {
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
