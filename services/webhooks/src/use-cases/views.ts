import type { WebhookDelivery, WebhookSubscription } from '@support-desk/contracts';
import type { DeliveryDoc } from '../store/deliveries.js';
import type { SubscriptionDoc } from '../store/subscriptions.js';

const iso = (d: Date | string | null | undefined) => (d ? new Date(d).toISOString() : null);

/** When the newest rotated-out secret stops signing (null when none signs any more). */
function previousSecretExpiry(doc: SubscriptionDoc, now: Date): string | null {
  const live = doc.secrets
    .filter((s) => s.expiresAt && new Date(s.expiresAt) > now)
    .map((s) => new Date(s.expiresAt!).getTime());
  return live.length ? new Date(Math.max(...live)).toISOString() : null;
}

export function toSubscriptionView(doc: SubscriptionDoc, now: Date): WebhookSubscription {
  return {
    id: doc._id,
    url: doc.url,
    events: doc.events,
    description: doc.description ?? '',
    active: doc.active,
    disabledReason: doc.active ? null : (doc.disabledReason ?? 'manual'),
    disabledAt: doc.active ? null : iso(doc.disabledAt),
    previousSecretExpiresAt: previousSecretExpiry(doc, now),
    ...(doc.expiresAt ? { expiresAt: iso(doc.expiresAt)! } : {}),
    createdAt: iso(doc.createdAt)!,
    updatedAt: iso(doc.updatedAt)!,
  };
}

export function toDeliveryView(doc: DeliveryDoc): WebhookDelivery {
  return {
    id: doc._id,
    webhookId: doc.subscriptionId,
    eventId: doc.eventId ?? null,
    eventType: doc.eventType,
    status: doc.status,
    attempts: doc.attempts ?? [],
    nextAttemptAt: doc.status === 'pending' ? iso(doc.nextAttemptAt) : null,
    createdAt: iso(doc.createdAt)!,
  };
}
