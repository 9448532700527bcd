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
