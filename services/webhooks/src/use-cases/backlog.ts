import type { DeliveryBacklog, DisabledReason } from '../metrics.js';
import type { Deps } from './deps.js';

/** Pending deliveries counted per subscription at most (the gauge then says "at least"). */
const PENDING_COUNT_CAP = 10_000;
/** Subscriptions whose deliveries are read at once. */
const READS_AT_ONCE = 4;

export function disabledReasonOf(reason: string | null): DisabledReason {
  if (reason?.startsWith('gone')) return 'gone';
  if (reason?.startsWith('failing')) return 'failing';
  return 'manual';
}

/**
 * The backlog figures for the gauges, without reading the deliveries collection whole: the live
 * subscriptions (the intake's read, shared with it), then per subscription a count of its pending
 * deliveries (capped) and its oldest pending one (one index entry on MongoDB; see
 * `pendingOf`/`oldestPendingOf`).
 */
export async function deliveryBacklog(deps: Deps): Promise<DeliveryBacklog> {
  const subs = await deps.subscriptions.live();
  const figures: DeliveryBacklog = {
    pending: { active: 0, inactive: 0 },
    oldestActiveAt: null,
    disabled: { gone: 0, failing: 0, manual: 0 },
  };
  for (const sub of subs) if (!sub.active) figures.disabled[disabledReasonOf(sub.disabledReason)]++;
  for (let i = 0; i < subs.length; i += READS_AT_ONCE) {
    await Promise.all(
      subs.slice(i, i + READS_AT_ONCE).map(async (sub) => {
        const pending = await deps.deliveries.pendingOf(sub._id, PENDING_COUNT_CAP);
        figures.pending[sub.active ? 'active' : 'inactive'] += pending;
        if (!sub.active || pending === 0) return;
        const oldest = await deps.deliveries.oldestPendingOf(sub._id);
        if (oldest !== null && (figures.oldestActiveAt === null || oldest < figures.oldestActiveAt)) {
          figures.oldestActiveAt = oldest;
        }
      }),
    );
  }
  return figures;
}
