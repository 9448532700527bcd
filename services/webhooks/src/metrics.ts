import { counter, gauge, histogram } from '@support-desk/platform/metrics';

/** The webhooks service's own metrics (the platform adds HTTP, consumer, outbox and process ones). */
export const deliveryAttempts = counter(
  'webhook_delivery_attempts_total',
  'Delivery attempts by outcome (success: a 2xx; failure: anything else, pings included)',
  ['outcome'],
);

/**
 * From the event to the 2xx that accepted its delivery, retries included: seconds for a healthy
 * receiver, hours for one that was down (the retry schedule runs for about 28 hours).
 */
const DELIVERY_LATENCY_BUCKETS = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 43200, 86400, 172800,
];

export const deliveryLatency = histogram(
  'webhook_delivery_latency_seconds',
  'Time from an event to the 2xx answer that accepted its delivery (pings not counted)',
  [],
  DELIVERY_LATENCY_BUCKETS,
);

export type DisabledReason = 'gone' | 'failing' | 'manual';

export const subscriptionsDisabled = counter<'reason'>(
  'webhook_subscriptions_disabled_total',
  'Subscriptions this replica disabled (gone: a 410 answer; failing: the failure threshold)',
  ['reason'],
);
// At 0 from the start, so the first disabling after a start counts as an increase.
for (const reason of ['gone', 'failing']) subscriptionsDisabled.inc({ reason }, 0);

/** What the backlog gauges show: the store's figures, read at scrape time (`deliveryBacklog`). */
export interface DeliveryBacklog {
  /** Pending deliveries of active subscriptions, and those held for inactive ones. */
  pending: { active: number; inactive: number };
  /** When the event of the oldest delivery pending for an active subscription happened (ms). */
  oldestActiveAt: number | null;
  /** Live subscriptions that are off, by why. */
  disabled: Record<DisabledReason, number>;
}

/**
 * The reader of this process's service, cached: one scrape reads the store once for the three
 * gauges, and a scrape within `ttlMs` of the last read (two Prometheus replicas, a dashboard)
 * reuses it. A failed read is not kept, and leaves the gauges out of that scrape.
 */
let backlog: { read: () => Promise<DeliveryBacklog>; ttlMs: number } | undefined;
let cached: { at: number; value: Promise<DeliveryBacklog | null> } | undefined;

export function watchDeliveryBacklog(read: () => Promise<DeliveryBacklog>, ttlMs: number): () => void {
  const watched = { read, ttlMs };
  backlog = watched;
  cached = undefined;
  return () => {
    if (backlog !== watched) return;
    backlog = undefined;
    cached = undefined;
  };
}

function currentBacklog(): Promise<DeliveryBacklog | null> {
  if (!backlog) return Promise.resolve(null);
  const now = Date.now();
  if (cached && now - cached.at < backlog.ttlMs) return cached.value;
  const value = backlog.read().catch(() => {
    cached = undefined;
    return null;
  });
  cached = { at: now, value };
  return value;
}

gauge(
  'webhook_deliveries_pending',
  'Pending deliveries in the store (subscription_state: active, or inactive: held until re-enabled)',
  ['subscription_state'],
  async (set) => {
    const figures = await currentBacklog();
    if (!figures) return;
    set({ subscription_state: 'active' }, figures.pending.active);
    set({ subscription_state: 'inactive' }, figures.pending.inactive);
  },
);

// The age is computed at scrape time from the event's time, so it keeps growing between reads.
gauge(
  'webhook_oldest_pending_delivery_age_seconds',
  'Age of the event of the oldest delivery pending for an active subscription (0: none)',
  [],
  async (set) => {
    const figures = await currentBacklog();
    if (!figures) return;
    const oldest = figures.oldestActiveAt;
    set({}, oldest === null ? 0 : Math.max(0, (Date.now() - oldest) / 1000));
  },
);

gauge(
  'webhook_subscriptions_disabled',
  'Subscriptions that are off, by reason (gone: 410; failing: the failure threshold; manual: turned off)',
  ['reason'],
  async (set) => {
    const figures = await currentBacklog();
    if (!figures) return;
    for (const [reason, n] of Object.entries(figures.disabled)) set({ reason }, n);
  },
);
