import {
  EVENT_CATALOGUE,
  EventEnvelope,
  type EventType,
  isEventType,
  mayPublishEvent,
  type NatsNames,
  type ReceivedEvent,
  TRACE_ID_PATTERN,
} from '@support-desk/contracts';
import { Compile } from 'typebox/compile';
import { PoisonMessageError } from './consumer.js';
import { type ReplayedSignature, WRITTEN_BEFORE_SIGNING } from './deadletters.js';
import { firstSchemaProblem } from './schema-problems.js';
import {
  EARLIER_RELEASE,
  type MessageVerifier,
  type Sender,
  UnauthenticatedMessageError,
} from './message-signing.js';

const checker = Compile(EventEnvelope);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const TRACE_ID = new RegExp(TRACE_ID_PATTERN);

/** How deep a snapshot may nest (a request's is 3 levels): deeper is no snapshot of ours. */
const SNAPSHOT_DEPTH = 8;

/**
 * A plain object every store can hold as it is: no key with a dot or a leading `$` (a path or an
 * operator to MongoDB, refused by FerretDB), at any depth up to `SNAPSHOT_DEPTH`. Anything else
 * would make a consumer's insert fail for good, so it is dropped like a snapshot that is no object.
 */
function isStorableObject(value: unknown, depth = 0): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || depth > SNAPSHOT_DEPTH)
    return false;
  return Object.entries(value).every(
    ([key, v]) => !key.includes('.') && !key.startsWith('$') && isStorable(v, depth + 1),
  );
}

function isStorable(value: unknown, depth: number): boolean {
  if (Array.isArray(value)) return depth <= SNAPSHOT_DEPTH && value.every((v) => isStorable(v, depth + 1));
  return typeof value !== 'object' || value === null || isStorableObject(value, depth);
}

/**
 * Parses one published domain event for every consumer of the events stream, as a tolerant
 * reader: it checks the envelope (the fields no version changes) and keeps only the fields this
 * release knows (a `snapshot` only when it is an object a store can hold: else it is dropped, not
 * poison). A
 * newer producer's extra fields, a higher `v` and an event type this release has never heard of
 * all pass (audit stores them: they are still events). Only what can never be an event is poison
 * for the consumer's dead letters: not UTF-8, not JSON, no valid envelope, or a known type filed
 * under the wrong resource type.
 */
export function decodeDomainEvent(data: Uint8Array): ReceivedEvent {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(data));
  } catch (err) {
    throw new PoisonMessageError(`not JSON: ${(err as Error).message}`);
  }
  if (!checker.Check(value)) {
    const first = firstSchemaProblem(EventEnvelope, value);
    const where = first?.path || '(root)';
    throw new PoisonMessageError(`not a domain event: ${where} ${first?.message ?? 'is invalid'}`);
  }
  if (isEventType(value.type) && EVENT_CATALOGUE[value.type] !== value.resourceType) {
    throw new PoisonMessageError(
      `not a domain event: /resourceType ${value.resourceType} does not match type ${value.type}`,
    );
  }
  const { actor, metadata } = value;
  const event: ReceivedEvent = {
    v: value.v ?? 1,
    id: value.id,
    type: value.type,
    resourceType: value.resourceType,
    resourceId: value.resourceId,
    actor: { id: actor.id, name: actor.name, email: actor.email, role: actor.role },
    metadata: { userAgent: metadata.userAgent, source: metadata.source, requestId: metadata.requestId },
    timestamp: value.timestamp,
  };
  if (typeof metadata.traceId === 'string' && TRACE_ID.test(metadata.traceId))
    event.metadata.traceId = metadata.traceId;
  if (value.changes) event.changes = value.changes;
  if (value.ipAddress !== undefined) event.ipAddress = value.ipAddress;
  // Kept as written (a newer producer's fields too); what is shown is the presenter's choice.
  if (isStorableObject(value.snapshot)) event.snapshot = value.snapshot;
  return event;
}

/**
 * Reads one message of the events stream as every consumer must (deliveries and dead-letter
 * replays alike): signed by a service (`verifier`), a domain event (`decodeDomainEvent`), on the
 * subject of its own type, and of a type (and resource) that service may publish
 * (`EVENT_PRODUCERS`). Anything else is poison, so a dead letter an operator can see: nothing
 * another service publishes can make a consumer act on an event it did not get from its producer.
 * A message of an earlier release that did not sign (during an upgrade, `ACCEPT_UNSIGNED_UNTIL`)
 * and a dead letter written before messages were signed (replayed on the operator's word) get
 * the checks of their time.
 */
export function domainEventReader(names: NatsNames, verifier: MessageVerifier) {
  return (data: Uint8Array, subject: string, signature: ReplayedSignature): ReceivedEvent => {
    let sender: Sender = EARLIER_RELEASE;
    if (signature !== WRITTEN_BEFORE_SIGNING) {
      try {
        sender = verifier.sender(subject, data, signature ?? undefined);
      } catch (err) {
        if (err instanceof UnauthenticatedMessageError)
          throw new PoisonMessageError(`unauthenticated: ${err.message}`);
        throw err;
      }
    }
    const event = decodeDomainEvent(data);
    if (subject !== names.eventSubject(event.type as EventType))
      throw new PoisonMessageError(`not a domain event: type ${event.type} does not belong on ${subject}`);
    if (sender !== EARLIER_RELEASE && !mayPublishEvent(sender, event.type, event.resourceId))
      throw new PoisonMessageError(
        `unauthenticated: ${sender} may not publish ${event.type} (resource ${event.resourceId})`,
      );
    return event;
  };
}

export type DomainEventReader = ReturnType<typeof domainEventReader>;
