import { createHash } from 'node:crypto';
import {
  type DeliveryListQuery,
  DELIVERY_STATUSES,
  newId,
  type ReceivedEvent,
  timeOfId,
} from '@support-desk/contracts';
import {
  backfillAtStart,
  listPage,
  listWindow,
  minuteKey,
  notFound,
  parseEnumList,
  readLimit,
  seekOf,
  toEventDetail,
  validationError,
} from '@support-desk/platform/core';
import type { DeliveryDoc } from '../store/deliveries.js';
import type { SubscriptionDoc } from '../store/subscriptions.js';
import type { Deps } from './deps.js';
import { getSubscription } from './subscriptions.js';
import { toDeliveryView } from './views.js';

const PING_TYPE = 'webhook.ping';
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * The delivery id (and `webhook-id`) of an event for a subscription: the event's time digits, then
 * 16 digits of a hash of both ids. The same pair always gives the same id (an event JetStream
 * delivers twice makes one delivery; receivers de-duplicate on it), and ids sort in event time.
 */
function deliveryIdFor(eventId: string, subscriptionId: string): string {
  const hash = createHash('sha256').update(`${eventId}|${subscriptionId}`).digest();
  const digits = Array.from(hash.subarray(0, 16), (b) => ALPHABET[b % 32]).join('');
  return `dlv_${eventId.slice(4, 14)}${digits}`;
}

/** Whether a subscription's patterns take this event type (`*`, `request.*`, `request.created`). */
export const matches = (patterns: string[], type: string) =>
  patterns.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));

/** One pending delivery, due now (an event's, a ping, a test event's). */
export function pendingDelivery(
  id: string,
  subscriptionId: string,
  event: { id: string | null; type: string },
  lane: string,
  position: string,
  payload: unknown,
  now: Date,
): DeliveryDoc {
  return {
    _id: id,
    subscriptionId,
    eventId: event.id,
    eventType: event.type,
    lane,
    position,
    payload: JSON.stringify(payload),
    status: 'pending',
    attempts: [],
    failedTries: 0,
    nextAttemptAt: now,
    dueMinute: minuteKey(now),
    createdAt: now,
  };
}

/**
 * An event from the stream: one delivery per subscription that takes it and existed when it
 * happened. The payload is the event as the events API shows it (the shared presenter: no
 * internal-note content) plus the subscription's id.
 */
export function fanOut(deps: Deps) {
  return async (event: ReceivedEvent, streamSeq: number | null = null): Promise<void> => {
    const at = new Date(event.timestamp);
    const subscribers = (await deps.subscriptions.live()).filter(
      (s: SubscriptionDoc) => matches(s.events, event.type) && new Date(s.createdAt) <= at,
    );
    if (subscribers.length === 0) return;
    const now = deps.clock();
    const detail = toEventDetail(event);
    const position = `${at.toISOString()}|${event.id}`;
    const deliveries = subscribers.map((s) => ({
      ...pendingDelivery(
        deliveryIdFor(event.id, s._id),
        s._id,
        event,
        `${s._id}|${event.resourceType}:${event.resourceId}`,
        position,
        { ...detail, webhookId: s._id },
        now,
      ),
      streamSeq,
    }));
    await deps.deliveries.insertNew(deliveries);
    deps.wake(
      deliveries.map((d) => d.lane),
      streamSeq,
    );
  };
}

/** A test delivery, on a lane of its own (nothing waits behind it, it waits for nothing). */
export async function ping(deps: Deps, subscriptionId: string) {
  const sub = await getSubscription(deps, subscriptionId);
  const now = deps.clock();
  const id = newId('delivery', now.getTime());
  const payload = { type: PING_TYPE, timestamp: now.toISOString(), webhookId: sub._id };
  const doc = pendingDelivery(
    id,
    sub._id,
    { id: null, type: PING_TYPE },
    `${sub._id}|ping:${id}`,
    `${now.toISOString()}|${id}`,
    payload,
    now,
  );
  await deps.deliveries.insertNew([doc]);
  deps.wake([doc.lane]);
  return toDeliveryView(doc);
}

/** Whether a cursor's id can position the delivery log (read by the time its id holds). */
const isDeliveryPosition = (id: string) => id.startsWith('dlv_') && timeOfId(id) !== undefined;

export async function listDeliveries(deps: Deps, subscriptionId: string, query: DeliveryListQuery) {
  await getSubscription(deps, subscriptionId);
  const statuses = parseEnumList('query.status', query.status, DELIVERY_STATUSES);
  let eventTypes: string[] | undefined;
  if (query.eventType !== undefined) {
    eventTypes = [...new Set(query.eventType.split(',').map((t) => t.trim()))].sort();
    if (eventTypes.some((t) => !/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(t))) {
      throw validationError('query.eventType', 'must be event types separated by commas');
    }
  }
  const scope = { sort: '-id', kinds: [], filters: { subscriptionId, statuses, eventTypes } };
  const window = listWindow(query, scope);
  if (window.mode === 'cursor' && !isDeliveryPosition(window.position.id))
    throw validationError(
      'query.cursor',
      'is not a cursor this list issued: pass `nextCursor`/`prevCursor` unchanged',
    );
  const found = await deps.deliveries.page(
    subscriptionId,
    { statuses, eventTypes },
    {
      skip: window.mode === 'page' ? window.skip : 0,
      limit: readLimit(window),
      seek: seekOf(window),
      count: window.mode === 'page',
    },
  );
  const keysOf = (d: { _id: string }) => ({ keys: [], id: d._id });
  const page = listPage(found.items, window, scope, keysOf, found);
  return { deliveries: page.items.map(toDeliveryView), pagination: page.pagination };
}

/**
 * Queues a delivery again, due now, with a fresh retry schedule and the same `webhook-id`. It
 * keeps its place in its lane: a replayed older event goes out before newer pending ones.
 */
export async function replayDelivery(deps: Deps, subscriptionId: string, deliveryId: string) {
  await getSubscription(deps, subscriptionId);
  const doc = await deps.deliveries.byId(deliveryId);
  if (!doc || doc.subscriptionId !== subscriptionId) throw notFound('Delivery');
  const now = deps.clock();
  const state = { status: 'pending' as const, nextAttemptAt: now, dueMinute: minuteKey(now), failedTries: 0 };
  await deps.deliveries.setState(deliveryId, state);
  deps.wake();
  return toDeliveryView({ ...doc, ...state });
}

/**
 * At start, before the intake and the worker: the list keys of deliveries stored before they
 * existed (without them the delivery log does not show them), their subscriptions' spans widened.
 */
export const completeStoredDeliveries = (deps: Deps) =>
  backfillAtStart(deps.logger, 'stored deliveries given their list keys', (limit) =>
    deps.deliveries.completeListKeys(limit),
  );
