import {
  type Actor,
  type Changes,
  type DomainEvent,
  EVENT_CATALOGUE,
  EVENT_VERSION,
  type EventSnapshot,
  type EventSource,
  type EventType,
  newId,
  type Principal,
  SYSTEM_ACTOR,
} from '@support-desk/contracts';
import { activeTraceId } from './telemetry/trace-context.js';

/** Who caused a change and through what: copied into every event the change emits. */
export interface EventContext {
  actor: Actor;
  source: EventSource;
  requestId: string | null;
  userAgent: string | null;
  ipAddress: string | null;
}

/**
 * Who made a change through the API: the principal, and the kind of credential it used (`oauth`
 * for an OAuth access token, `api` for an API key) unless the caller names another source.
 */
export function contextFromPrincipal(
  p: Principal,
  source: EventSource = p.credential?.type === 'oauth' ? 'oauth' : 'api',
): EventContext {
  return {
    actor: { id: p.userId, name: p.name, email: p.email, role: p.role },
    source,
    requestId: p.requestId,
    userAgent: p.userAgent,
    ipAddress: p.clientIp,
  };
}

export const systemContext = (requestId: string | null = null): EventContext => ({
  actor: SYSTEM_ACTOR,
  source: 'system',
  requestId,
  userAgent: null,
  ipAddress: null,
});

export function buildEvent(
  type: EventType,
  resourceId: string,
  ctx: EventContext,
  changes?: Changes,
  now: Date = new Date(),
): DomainEvent {
  const event: DomainEvent = {
    v: EVENT_VERSION,
    id: newId('event', now.getTime()),
    type,
    resourceType: EVENT_CATALOGUE[type],
    resourceId,
    actor: ctx.actor,
    metadata: { userAgent: ctx.userAgent, source: ctx.source, requestId: ctx.requestId },
    timestamp: now.toISOString(),
  };
  const traceId = activeTraceId();
  if (traceId) event.metadata.traceId = traceId;
  if (changes && Object.keys(changes).length > 0) event.changes = changes;
  if (ctx.ipAddress) event.ipAddress = ctx.ipAddress;
  return event;
}

/** The event carrying the resource as the change leaves it (`snapshot`, request.* and user.* events). */
export const withSnapshot = (event: DomainEvent, snapshot: EventSnapshot): DomainEvent => ({
  ...event,
  snapshot,
});

/** `{field: {from, to}}` for every field whose value differs (deep equality via JSON). */
export function diffChanges(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  fields: string[],
): Changes {
  const changes: Changes = {};
  for (const f of fields) {
    if (!(f in after)) continue;
    const from = before[f] ?? null;
    const to = after[f] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[f] = { from, to };
  }
  return changes;
}
