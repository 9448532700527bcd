import { buildEvent, eventEntry, minuteKey, systemContext } from '@support-desk/platform/core';
import type { AttemptOutcome } from '../events/sender.js';
import { subscriptionsDisabled } from '../metrics.js';
import type { DeliveryDoc } from '../store/deliveries.js';
import type { SubscriptionDoc } from '../store/subscriptions.js';
import { disabledReasonOf } from './backlog.js';
import type { Deps } from './deps.js';

export interface RetryPolicy {
  /** Delay after each failed attempt (ms): the schedule; past its end a delivery is `failed`. */
  schedule: number[];
  /** A subscription is disabled after this many failed attempts in a row … */
  disableAfterFailures: number;
  /** … spanning at least this long without a success. */
  disableAfterMs: number;
}

/** ±20% jitter, so deliveries that failed together do not all come back at once. */
const withJitter = (ms: number, random = Math.random) => Math.round(ms * (0.8 + 0.4 * random()));

const isSuccess = (o: AttemptOutcome) => o.status !== null && o.status >= 200 && o.status < 300;

/** The delivery's state after an attempt: done, failed for good, or due again after a delay. */
export function nextState(doc: DeliveryDoc, outcome: AttemptOutcome, now: Date, policy: RetryPolicy) {
  if (isSuccess(outcome)) {
    return {
      status: 'succeeded' as const,
      nextAttemptAt: null,
      dueMinute: null,
      failedTries: doc.failedTries,
    };
  }
  const failedTries = (doc.failedTries ?? 0) + 1;
  const delay = policy.schedule[failedTries - 1];
  if (outcome.status === 410 || delay === undefined) {
    return { status: 'failed' as const, nextAttemptAt: null, dueMinute: null, failedTries };
  }
  const at = new Date(now.getTime() + withJitter(delay));
  return { status: 'pending' as const, nextAttemptAt: at, dueMinute: minuteKey(at), failedTries };
}

/** Turns a subscription off, with the reason and a `system.config_changed` event. */
async function disable(deps: Deps, id: string, reason: string, now: Date) {
  const disabled = await deps.subscriptions.update(id, (current) => {
    if (!current.active) return { write: null, result: false };
    const changes = {
      'webhook.active': { from: true, to: false },
      'webhook.disabledReason': { from: null, to: reason },
    };
    const event = buildEvent('system.config_changed', id, systemContext(), changes, now);
    return {
      write: {
        set: { active: false, disabledReason: reason, disabledAt: now, updatedAt: now },
        outbox: [eventEntry(deps.names, event)],
      },
      result: true,
    };
  });
  if (!disabled) return;
  subscriptionsDisabled.inc({ reason: disabledReasonOf(reason) });
  deps.logger.warn({ webhookId: id, reason }, 'webhook subscription disabled');
}

/**
 * What an attempt means for its subscription: a success clears the failure count; 410 Gone
 * disables it at once; other failures count, and a subscription failing for long enough
 * (`disableAfterMs`, at least `disableAfterFailures` attempts in a row) is disabled. Pings
 * count for nothing. The count is approximate across replicas (each write is a compare-and-set,
 * retried; a lost race only delays the threshold).
 */
export async function applyToSubscription(
  deps: Deps,
  sub: SubscriptionDoc,
  doc: DeliveryDoc,
  outcome: AttemptOutcome,
  now: Date,
  policy: RetryPolicy,
): Promise<void> {
  if (doc.eventId === null) return;
  if (isSuccess(outcome)) {
    if (sub.failures === 0) return;
    await deps.subscriptions.update(sub._id, () => ({
      write: { set: { failures: 0, failingSince: null } },
      result: null,
    }));
    return;
  }
  if (outcome.status === 410) {
    await disable(deps, sub._id, 'gone: the receiver answered 410 Gone', now);
    return;
  }
  const counted = await deps.subscriptions.update(sub._id, (current) => {
    const failures = (current.failures ?? 0) + 1;
    const failingSince = current.failingSince ?? now;
    return { write: { set: { failures, failingSince } }, result: { failures, failingSince } };
  });
  const failingFor = now.getTime() - new Date(counted.failingSince).getTime();
  if (counted.failures >= policy.disableAfterFailures && failingFor >= policy.disableAfterMs) {
    const reason = `failing: ${counted.failures} failed attempts in a row since ${new Date(counted.failingSince).toISOString()}`;
    await disable(deps, sub._id, reason, now);
  }
}
