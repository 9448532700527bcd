import {
  EVENT_CATALOGUE,
  EVENT_TYPES,
  type IdKind,
  isEventType,
  newId,
  type TriggerTestEventFields,
} from '@support-desk/contracts';
import { buildEvent, type EventContext, toEventDetail, validationError } from '@support-desk/platform/core';
import type { SubscriptionDoc } from '../store/subscriptions.js';
import { matches, pendingDelivery } from './deliveries.js';
import type { Deps } from './deps.js';
import { getSubscription } from './subscriptions.js';
import { toDeliveryView } from './views.js';

/** The resource a test event names: an id of the right kind that no resource has. */
const RESOURCE_KIND: Partial<Record<string, IdKind>> = { request: 'request', user: 'user' };

/**
 * `deskctl webhooks trigger <type>`: a test event of a catalogued type, made here and never
 * published (audit, the requests read model and other services never see it), delivered like an
 * event to every active subscription that takes the type, or to one named subscription (as a ping
 * is, even while it is inactive). Its payload is the event as a real one is shown, with `test:
 * true`, no `snapshot` and no `changes`; the acting admin is its actor. Each delivery goes on a
 * lane of its own and, like a ping, counts for nothing (no failure count, a 410 disables nothing):
 * a test checks an endpoint, it must not unsubscribe one. The delivery records `eventId: null`
 * (the test event is in no event log); the payload's `id` is the test event's.
 */
export async function triggerTestEvent(deps: Deps, ctx: EventContext, fields: TriggerTestEventFields) {
  const { type } = fields;
  if (!isEventType(type))
    throw validationError(
      'body.type',
      `"${type.slice(0, 60)}" is not an event type: ${EVENT_TYPES.join(', ')}`,
    );
  let subscribers: SubscriptionDoc[];
  if (fields.webhookId !== undefined) {
    const sub = await getSubscription(deps, fields.webhookId);
    if (!matches(sub.events, type))
      throw validationError('body.webhookId', `takes ${sub.events.join(', ')}, not ${type}`);
    subscribers = [sub];
  } else {
    subscribers = (await deps.subscriptions.live()).filter((s) => s.active && matches(s.events, type));
  }
  const now = deps.clock();
  const kind = RESOURCE_KIND[EVENT_CATALOGUE[type]];
  const resourceId = kind ? newId(kind, now.getTime()) : 'system';
  const event = buildEvent(type, resourceId, ctx, undefined, now);
  const detail = { ...toEventDetail(event), test: true };
  const deliveries = subscribers.map((s) => {
    const id = newId('delivery', now.getTime());
    return pendingDelivery(
      id,
      s._id,
      { id: null, type },
      `${s._id}|test:${id}`,
      `${now.toISOString()}|${id}`,
      { ...detail, webhookId: s._id },
      now,
    );
  });
  await deps.deliveries.insertNew(deliveries);
  deps.wake(deliveries.map((d) => d.lane));
  return { event: { id: event.id, type }, deliveries: deliveries.map(toDeliveryView) };
}
