import {
  EVENT_CATALOGUE,
  EventEnvelope,
  isEventType,
  type ReceivedEvent,
  TRACE_ID_PATTERN,
} from '@support-desk/contracts';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { PoisonMessageError } from './consumer.js';

const checker = TypeCompiler.Compile(EventEnvelope);
const utf8 = new TextDecoder('utf-8', { fatal: true });
const TRACE_ID = new RegExp(TRACE_ID_PATTERN);

/**
 * Parses one published domain event for every consumer of the events stream, as a tolerant
 * reader: it checks the envelope (the fields no version changes) and keeps only the fields this
 * release knows. A newer producer's extra fields, a higher `v` and an event type this release has
 * never heard of all pass (audit stores them: they are still events). Only what can never be an
 * event is poison for the consumer's dead letters: not UTF-8, not JSON, no valid envelope, or a
 * known type filed under the wrong resource type.
 */
export function decodeDomainEvent(data: Uint8Array): ReceivedEvent {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(data));
  } catch (err) {
    throw new PoisonMessageError(`not JSON: ${(err as Error).message}`);
  }
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First();
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
  return event;
}
