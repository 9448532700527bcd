import {
  type Changes,
  type EventDetail,
  type EventListItem,
  type EventSnapshot,
  type ReceivedEvent,
  type RequestEventItem,
  RequestEventSnapshot,
  UserDetail,
} from '@support-desk/contracts';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';

/**
 * How an event is shown to clients, wherever it is shown: the events API (audit) and webhook
 * deliveries (webhooks) present the same event the same way, from this one place.
 */

/** An event as a reader holds it (a received event, or audit's stored copy): any timestamp form. */
export type PresentableEvent = Omit<ReceivedEvent, 'v' | 'metadata' | 'timestamp'> & {
  metadata?: ReceivedEvent['metadata'];
  timestamp: Date | string;
};

// The API documents the types, resource types, roles and sources this release knows; an event a
// newer producer filed under a new one is still shown, as received.
const known = <T extends string>(value: string) => value as T;

const summaryActor = (e: PresentableEvent) => ({ id: e.actor.id, name: e.actor.name, email: e.actor.email });

const isoTime = (at: Date | string) => (typeof at === 'string' ? at : at.toISOString());

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/**
 * The rule that internal-note content never leaves the service that holds it: requests announces
 * an internal comment without its `content`, and a presenter drops one that an older or faulty
 * producer left in (the events API and webhooks are readable more widely than internal notes).
 */
export function publicChanges(changes: Changes | undefined): Changes | undefined {
  if (!changes || Object.keys(changes).length === 0) return undefined;
  const out: Changes = {};
  for (const [field, change] of Object.entries(changes)) {
    const internal = (v: unknown) => isRecord(v) && v.isInternal === true && 'content' in v;
    const strip = (v: unknown) => {
      if (!internal(v)) return v;
      const { content: _content, ...rest } = v as Record<string, unknown>;
      return rest;
    };
    out[field] = { from: strip(change.from), to: strip(change.to) };
  }
  return out;
}

/** The snapshot shape of each resource type, checked by a compiled validator. */
const SNAPSHOTS = new Map(
  (
    [
      ['request', RequestEventSnapshot],
      ['user', UserDetail],
    ] as [string, TSchema][]
  ).map(([type, schema]) => [type, { schema, check: Compile(schema) }]),
);

/**
 * An event's `snapshot` as this release shows it: the fields this release does not know removed
 * (a newer producer's additions, or comment bodies a faulty producer left in: internal notes never
 * leave), then checked against the resource type's shape; anything that does not check, or a
 * snapshot on a resource type that has none, is left out rather than shown half-understood.
 */
export function publicSnapshot(
  e: Pick<PresentableEvent, 'resourceType' | 'snapshot'>,
): EventSnapshot | undefined {
  const known = SNAPSHOTS.get(e.resourceType);
  if (!known || !isRecord(e.snapshot)) return undefined;
  const shown = Value.Clean(known.schema, structuredClone(e.snapshot));
  return known.check.Check(shown) ? (shown as EventSnapshot) : undefined;
}

/** An event in `GET /v1/events`: no metadata, actor without role. */
export function toEventListItem(e: PresentableEvent): EventListItem {
  const item: EventListItem = {
    id: e.id,
    type: known<EventListItem['type']>(e.type),
    resourceType: known<EventListItem['resourceType']>(e.resourceType),
    resourceId: e.resourceId,
    actor: summaryActor(e),
    timestamp: isoTime(e.timestamp),
  };
  const changes = publicChanges(e.changes);
  if (changes) item.changes = changes;
  if (e.ipAddress) item.ipAddress = e.ipAddress;
  const snapshot = publicSnapshot(e);
  if (snapshot) item.snapshot = snapshot;
  return item;
}

/** `GET /v1/events/:id` (and a webhook's payload): the list fields, `metadata` and `actor.role`. */
export function toEventDetail(e: PresentableEvent): EventDetail {
  return {
    ...toEventListItem(e),
    actor: { ...summaryActor(e), role: known<EventDetail['actor']['role']>(e.actor.role) },
    metadata: {
      userAgent: e.metadata?.userAgent ?? null,
      source: known<EventDetail['metadata']['source']>(e.metadata?.source ?? 'system'),
      requestId: e.metadata?.requestId ?? null,
      ...(e.metadata?.traceId ? { traceId: e.metadata.traceId } : {}),
    },
  };
}

/** An event in `GET /v1/requests/:id/events`. */
export function toRequestEventItem(e: PresentableEvent): RequestEventItem {
  const item: RequestEventItem = {
    id: e.id,
    type: known<RequestEventItem['type']>(e.type),
    timestamp: isoTime(e.timestamp),
    actor: summaryActor(e),
  };
  const changes = publicChanges(e.changes);
  if (changes) item.changes = changes;
  return item;
}
