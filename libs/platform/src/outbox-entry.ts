import { type DomainEvent, type NatsNames, newId } from '@support-desk/contracts';
import { injectTraceContext } from './telemetry/trace-context.js';

/** One event an aggregate's write put in its outbox, for the relay to publish. */
export interface OutboxEntry {
  id: string;
  subject: string;
  payload: string;
  createdAt: Date;
  /**
   * The W3C trace context the entry was written in: the relay publishes it later (another pass,
   * another replica) in the same trace. Absent outside any trace.
   */
  traceparent?: string;
  tracestate?: string;
}

/** An entry written now, in the active trace. */
function entry(id: string, subject: string, payload: string): OutboxEntry {
  return { id, subject, payload, createdAt: new Date(), ...injectTraceContext() };
}

export function eventEntry(names: NatsNames, event: DomainEvent): OutboxEntry {
  return entry(event.id, names.eventSubject(event.type), JSON.stringify(event));
}

/** Any other message that must leave with the write (e.g. credential notices). */
export function messageEntry(subject: string, body: unknown): OutboxEntry {
  return entry(newId('event'), subject, JSON.stringify(body));
}
